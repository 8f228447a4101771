// CommonJS user: require("@codeaction/core") either works (Node 22's require of ESM) or fails
// with a message that says the package is ESM and how to import it.
try {
  const core = require("@codeaction/core");
  console.log(`required: buildAgent is a ${typeof core.buildAgent}`);
} catch (error) {
  console.log(`refused: ${error.code}: ${error.message}`);
}

/**
 * Getting the program out of a model's reply, and the answer out of a program's output.
 *
 * The rule (stated in the prompt): a reply holds exactly one program, in one fenced block tagged
 * python (py, python3 and any case count too). Untagged blocks count only when no block is tagged
 * python. A reply with no fence at all counts only when it reads as a bare program (its first line is
 * Python and it mentions RESULT). Anything else is refused before a container starts, and so is a
 * reply over `maxReplyCharacters` (256 Ki characters), unread: the model is told its size and the cap.
 */
import { type FencedBlock, fencedBlocks, maxReplyCharacters, unclosedBlock } from "./reply-fences.ts";

const pythonTags = new Set(["python", "py", "python3"]);

/** What `readReplyProgram` returns: the program, or why the reply holds none to run. */
export type ReplyProgram =
  | { ok: true; program: string }
  | {
      ok: false;
      /**
       * "no-program": nothing to run; "several-programs": more than one python block;
       * "reply-too-long": over `maxReplyCharacters`, refused before it is read.
       */
      problem: "no-program" | "several-programs" | "reply-too-long";
      /** What the model is told (the repair message's reason). */
      message: string;
      /** The blocks that were found (for the record). */
      blocks: number;
    };

function blocksOf(reply: string): FencedBlock[] {
  const tidy = (block: FencedBlock) => ({
    tag: block.tag.toLowerCase(),
    body: block.body.replace(/\s+$/, ""),
  });
  const blocks = fencedBlocks(reply, () => true).map(tidy);
  if (blocks.length > 0) return blocks;
  // An opened block the model never closed (a reply cut off at its length limit).
  const unclosed = unclosedBlock(reply);
  return unclosed ? [tidy(unclosed)] : [];
}

/** A first line that starts a Python statement: an import, a definition, an assignment or a call. */
const pythonStart =
  /^(import\s+\w|from\s+[\w.]+\s+import\s|def\s+\w+\s*\(|class\s+\w|async\s+def\s|#|@\w|(for|while|if|with|try)\b.*:$|[A-Za-z_][\w.]*(\[[^\]]*\])?\s*(=|\+=|-=)\s*\S|[A-Za-z_][\w.]*\s*\()/;

function isBareProgram(reply: string): boolean {
  const firstLine = reply.trim().split("\n")[0]?.trim() ?? "";
  return reply.includes("RESULT") && pythonStart.test(firstLine);
}

/** The one program in a reply, or why there is none to run (see the rule above). */
export function readReplyProgram(reply: string): ReplyProgram {
  if (reply.length > maxReplyCharacters) {
    return {
      ok: false,
      problem: "reply-too-long",
      blocks: 0,
      message: `No program was run: your reply was ${reply.length} characters, over the ${maxReplyCharacters} a reply may have, so it was not read. Reply with one short Python program in one \`\`\`python block; keep data in files, not in the program.`,
    };
  }
  const blocks = blocksOf(reply);
  const tagged = blocks.filter((block) => pythonTags.has(block.tag));
  const candidates = tagged.length > 0 ? tagged : blocks.filter((block) => block.tag === "");
  const [only] = candidates;
  if (candidates.length === 1 && only && only.body.trim() !== "") return { ok: true, program: only.body };
  if (candidates.length > 1) {
    return {
      ok: false,
      problem: "several-programs",
      blocks: candidates.length,
      message: `Your reply had ${candidates.length} python blocks, so nothing was run: the reply must hold exactly one program, in one \`\`\`python block. Put all the code in that one block.`,
    };
  }
  if (blocks.length === 0 && isBareProgram(reply)) return { ok: true, program: reply.trim() };
  const others = [...new Set(blocks.map((block) => block.tag).filter((tag) => tag && !pythonTags.has(tag)))];
  const found =
    candidates.length === 1
      ? "the python block in your reply was empty"
      : others.length > 0
        ? `it had only ${others.map((tag) => `a ${tag} block`).join(" and ")}, and only Python runs`
        : "your reply had no python block";
  return {
    ok: false,
    problem: "no-program",
    blocks: blocks.length,
    message: `No program was run: ${found}. Reply with one complete Python program in one \`\`\`python block.`,
  };
}

/**
 * The program in a reply when it has exactly one (see readReplyProgram); else the first python
 * block, or "" when there is none.
 */
export function extractProgram(reply: string): string {
  const read = readReplyProgram(reply);
  if (read.ok) return read.program;
  if (read.problem === "reply-too-long") return "";
  const first = blocksOf(reply).find((block) => pythonTags.has(block.tag) || block.tag === "");
  return first?.body ?? "";
}

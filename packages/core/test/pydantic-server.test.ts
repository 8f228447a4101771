import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectedServers, connectServers } from "../src/mcp/connect.ts";
import { renderStubSignatures } from "../src/stubs/index.ts";

// Issue 43 #11: the stubs of a tool listed by an MCP server in pydantic's shape ($defs, $ref,
// allOf beside a description, anyOf with null, enums as $defs entries, titles everywhere), read
// through core's MCP client from a real server process.
const server = fileURLToPath(new URL("./fixtures/pydantic-server.ts", import.meta.url));

describe("a pydantic MCP server's tool as the model sees it", () => {
  let connected: ConnectedServers;
  let stubs: string;
  beforeAll(async () => {
    connected = await connectServers({ orders: { command: process.execPath, args: [server] } });
    stubs = renderStubSignatures(connected.tools);
  });
  afterAll(async () => {
    await connected?.close();
  });

  it("types every argument from its $defs model, enum and Optional", () => {
    expect(stubs).toContain(
      "def place_order(*, customer: dict[str, Any], items: list[dict[str, Any]], " +
        'priority: Literal["low", "normal", "high"] = "normal", gift_address: Address | None = None, ' +
        "note: str | None = None) -> Any:",
    );
  });

  it("defines the Optional model as a TypedDict named after its $defs entry", () => {
    expect(stubs).toContain(
      [
        "class Address(TypedDict):",
        "    street: str  # Street and number.",
        "    city: str",
        "    postcode: NotRequired[str | None]  # Defaults to null.",
      ].join("\n"),
    );
    expect(stubs).toContain(
      "gift_address: Ship to this address instead, as a gift. A dict shaped as Address",
    );
  });

  it("documents the fields of the models behind each $ref, the described allOf typed as its model", () => {
    expect(stubs).toContain(
      [
        "        customer: Required.",
        "            name (str)",
        "            email (str)",
        "            address (dict[str, Any]): Where the order ships.",
        "        items: Required.",
        "            sku (str)",
        "            quantity (int, > 0)",
      ].join("\n"),
    );
  });

  it("leaves no argument typed Any", () => {
    const signature = stubs.split("\n").find((line) => line.startsWith("def place_order("));
    expect(signature?.replace(/ -> Any:$/, "")).not.toMatch(/: Any\b|\[Any\]/);
  });
});

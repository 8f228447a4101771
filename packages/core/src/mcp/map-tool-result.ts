import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";

/**
 * What a program (or a tools-pattern model) receives for an MCP tool result. Structure is kept:
 * - `structuredContent` -> that object, as is;
 * - otherwise each content item is mapped, and one item arrives alone, several as a list:
 *   text -> str; image/audio -> `{type, mimeType, data}`; embedded resource ->
 *   `{type: "resource", uri, mimeType, text}` or `{..., blob}`; resource link ->
 *   `{type: "resource_link", uri, name, mimeType, description}`;
 * - no content at all -> null.
 * Error results (`isError`) are not mapped here: see `errorText`.
 */
export function mapToolResult(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const items = result.content.map(mapContentBlock);
  if (items.length === 0) return null;
  if (items.length === 1) return items[0];
  return items;
}

export function mapContentBlock(block: ContentBlock): unknown {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return { type: block.type, mimeType: block.mimeType, data: block.data };
    case "resource": {
      const resource = block.resource;
      const body = "text" in resource ? { text: resource.text } : { blob: resource.blob };
      return { type: "resource", uri: resource.uri, mimeType: resource.mimeType ?? null, ...body };
    }
    case "resource_link":
      return {
        type: "resource_link",
        uri: block.uri,
        name: block.name,
        mimeType: block.mimeType ?? null,
        description: block.description ?? null,
      };
    default:
      // A content type newer than this client: pass it on as the server sent it.
      return block;
  }
}

/** The server's message of an `isError` result: its text items, one per line. */
export function errorText(result: CallToolResult): string {
  const texts = result.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  if (texts.length > 0) return texts.join("\n");
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return "";
}

/**
 * A tool result already in the form the program receives: the exact JSON text the bridge sends (see
 * tool-value.ts) and the JSON-safe copy records keep. A durable run's call log returns one for a
 * call it answers (the program gets the same bytes as the first time) and for a live call it has
 * encoded to log it (the bridge does not encode it a second time). Still held to maxResultBytes.
 */
export class EncodedToolResult {
  readonly text: string;
  readonly record: unknown;

  constructor(text: string, record: unknown) {
    this.text = text;
    this.record = record;
  }
}

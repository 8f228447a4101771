import type { ServerResponse } from "node:http";

/** How long a client may leave a reply unread before its connection is closed. */
export const defaultStallMs = 30_000;

/**
 * Closes the connection of a response whose client stopped reading: bytes wait in the socket's
 * buffer and none of them leave for `stallMs`. So a client that never reads cannot make the server
 * hold its replies.
 */
export function closeWhenStalled(response: ServerResponse, stallMs = defaultStallMs): void {
  const socket = response.socket;
  if (!socket) return;
  // bytesWritten counts what is buffered too; less the buffer, it is what the kernel took.
  const sent = () => socket.bytesWritten - socket.writableLength;
  let lastSent = sent();
  let lastProgress = performance.now();
  const timer = setInterval(
    () => {
      const now = performance.now();
      if (socket.writableLength === 0 || sent() !== lastSent) {
        lastSent = sent();
        lastProgress = now;
      } else if (now - lastProgress >= stallMs) {
        socket.destroy();
      }
    },
    Math.max(10, Math.min(1000, stallMs / 4)),
  );
  timer.unref();
  response.once("close", () => clearInterval(timer));
}

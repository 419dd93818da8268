/**
 * Length-prefixed framing: each frame is a 4-byte big-endian payload length, then the payload.
 */

/** Bytes of the length prefix. */
export const FRAME_HEADER_BYTES = 4;

/** Thrown when a peer announces a frame over the limit; the connection must be closed. */
export class FrameTooLargeError extends Error {
  constructor(
    readonly sizeBytes: number,
    readonly frameBytesMax: number,
  ) {
    super(`frame of ${sizeBytes} bytes exceeds frameBytesMax ${frameBytesMax}`);
    this.name = 'FrameTooLargeError';
  }
}

/** Builds the 4-byte header of a frame whose payload is `sizeBytes` long. */
export function frameHeader(sizeBytes: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32BE(sizeBytes, 0);
  return header;
}

/** Accumulates stream chunks and cuts them into frame payloads. */
export class FrameDecoder {
  #pending: Buffer = Buffer.alloc(0);

  constructor(readonly frameBytesMax: number) {}

  /** Returns the payloads completed by `chunk`, in order. Throws FrameTooLargeError. */
  push(chunk: Buffer): Buffer[] {
    let buffer = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const frames: Buffer[] = [];
    while (buffer.length >= FRAME_HEADER_BYTES) {
      const sizeBytes = buffer.readUInt32BE(0);
      if (sizeBytes > this.frameBytesMax)
        throw new FrameTooLargeError(sizeBytes, this.frameBytesMax);
      const end = FRAME_HEADER_BYTES + sizeBytes;
      if (buffer.length < end) break;
      frames.push(buffer.subarray(FRAME_HEADER_BYTES, end));
      buffer = buffer.subarray(end);
    }
    this.#pending = buffer;
    return frames;
  }
}

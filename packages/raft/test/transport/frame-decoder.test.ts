// Proves the frame decoder reassembles frames split at any byte boundary and refuses oversized ones.
import t from 'tap';
import {
  FrameDecoder,
  FrameTooLargeError,
  frameHeader,
} from '../../src/transport/frame-decoder.js';

const frame = (payload: Buffer) => Buffer.concat([frameHeader(payload.length), payload]);

t.test('frames split byte by byte and glued together come out whole and in order', async (t) => {
  const payloads = [Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(300, 7), Buffer.from('last')];
  const stream = Buffer.concat(payloads.map(frame));
  const decoder = new FrameDecoder(1024);
  const out: Buffer[] = [];
  for (const byte of stream) out.push(...decoder.push(Buffer.from([byte])));
  t.same(out, payloads);
  t.same(new FrameDecoder(1024).push(stream), payloads, 'all at once');
});

t.test('a frame announcing more than frameBytesMax throws', async (t) => {
  t.throws(() => new FrameDecoder(10).push(frame(Buffer.alloc(11))), FrameTooLargeError);
});

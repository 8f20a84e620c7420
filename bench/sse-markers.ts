/** The latency benches' reading of an event stream: numbered markers found in its raw bytes. */

/**
 * Calls `onNumber` for every `mark` followed by digits in `data` (a stream's
 * bytes, the previous chunk's tail first), and returns what to keep for the
 * next chunk: only what may hold the start of a marker not seen whole yet
 * (never one already reported).
 */
export function scanMarkers(data: Buffer, mark: Buffer, onNumber: (n: number) => void) {
  let from = 0;
  for (;;) {
    const found = data.indexOf(mark, from);
    if (found === -1) break;
    const digits = found + mark.length;
    let end = digits;
    while (end < data.length && data[end]! >= 0x30 && data[end]! <= 0x39) end++;
    if (end === data.length) {
      from = found;
      break;
    }
    onNumber(Number(data.subarray(digits, end).toString('latin1')));
    from = end;
  }
  return Buffer.from(data.subarray(Math.max(from, data.length - (mark.length + 20))));
}

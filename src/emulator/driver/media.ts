/** How long media take in simulated time, and what a play_wav_data WAV holds. */

/** A TTS text at about 150 words a minute; a library media 3 s; `0` (none) nothing. */
export function mediaMs(media: unknown): number {
  if (typeof media !== 'string' || media === '' || media === '0') return 0;
  if (/^[0-9]+$/.test(media)) return 3000;
  const text = media.split('|').slice(2).join('|');
  const words = text.split(/\s+/).filter(Boolean).length;
  return Math.max(1000, words * 400);
}

export type WavCheck = { ok: true; ms: number } | { ok: false; reason: string };

/** play_wav_data's audio must be a WAV file, PCM 8000 Hz, 16-bit, mono. */
export function checkWav(base64: string): WavCheck {
  const b = Buffer.from(base64.replace(/\s+/g, ''), 'base64');
  if (b.length < 12 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE')
    return { ok: false, reason: 'not a WAV file (no RIFF/WAVE header)' };
  let off = 12;
  let fmt: { format: number; channels: number; rate: number; bits: number } | undefined;
  let dataBytes: number | undefined;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'fmt ' && off + 24 <= b.length) {
      fmt = {
        format: b.readUInt16LE(off + 8),
        channels: b.readUInt16LE(off + 10),
        rate: b.readUInt32LE(off + 12),
        bits: b.readUInt16LE(off + 22),
      };
    } else if (id === 'data') {
      dataBytes = Math.min(size, b.length - off - 8);
      break;
    }
    off += 8 + size + (size % 2);
  }
  if (!fmt) return { ok: false, reason: 'the WAV file has no fmt chunk' };
  const wrong: string[] = [];
  if (fmt.format !== 1) wrong.push(`format ${fmt.format} (not PCM)`);
  if (fmt.rate !== 8000) wrong.push(`${fmt.rate} Hz`);
  if (fmt.bits !== 16) wrong.push(`${fmt.bits}-bit`);
  if (fmt.channels !== 1) wrong.push(`${fmt.channels} channels`);
  if (wrong.length > 0)
    return { ok: false, reason: `the WAV is ${wrong.join(', ')}; it must be PCM 8000 Hz, 16-bit, mono` };
  if (dataBytes === undefined) return { ok: false, reason: 'the WAV file has no data chunk' };
  return { ok: true, ms: Math.round((dataBytes / 16000) * 1000) };
}

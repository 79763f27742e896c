/**
 * The source of a flow version that enters modules (version 2 subflows): its own text and
 * the texts of the modules it may enter, in one string, so that a version kept for a
 * rollback or shared through the store (another instance that never loaded the modules)
 * compiles again to the same version. A flow with no modules keeps its plain text.
 */
const MARK = '# callscript bundle 1\n';

export function makeBundle(file: string, text: string, modules: readonly { file: string; text: string }[]): string {
  return MARK + JSON.stringify({ files: [{ file, text }, ...modules.map((m) => ({ file: m.file, text: m.text }))] });
}

/** The files of a bundle (the flow's first), or the file itself when it is no bundle. */
export function unbundle(f: { file: string; text: string }): { file: string; text: string }[] {
  if (!f.text.startsWith(MARK)) return [f];
  try {
    const parsed = JSON.parse(f.text.slice(MARK.length)) as { files?: unknown };
    if (!Array.isArray(parsed.files)) return [f];
    const out = parsed.files.filter(
      (x): x is { file: string; text: string } =>
        !!x && typeof (x as { file?: unknown }).file === 'string' && typeof (x as { text?: unknown }).text === 'string',
    );
    return out.length ? out.map((x) => ({ file: x.file, text: x.text })) : [f];
  } catch {
    return [f];
  }
}

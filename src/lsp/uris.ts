/** Document URIs and paths: the editor names files by `file:` URI, callscript by absolute path. */
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The path of a `file:` URI; undefined for other schemes (an unsaved buffer, a remote file). */
export function uriToPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

export const pathToUri = (path: string): string => pathToFileURL(path).href;

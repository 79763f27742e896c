/**
 * Watches the flows directory (and the config file) and calls back, debounced, once the
 * changes pause. Directories are watched rather than files, so an editor that saves by
 * writing a temporary file and renaming it over the original is seen too.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { isFlowFileName } from './load.js';

export interface WatchOptions {
  dir: string;
  configFile?: string;
  /** Quiet time before calling back. Default 150 ms. */
  debounceMs?: number;
  onFlows: () => void;
  onConfig?: () => void;
  onError?: (err: Error) => void;
}

export interface Watcher {
  close(): void;
}

export function watchFlows(o: WatchOptions): Watcher {
  const debounceMs = o.debounceMs ?? 150;
  const timers = new Map<string, NodeJS.Timeout>();
  const later = (kind: string, fn: () => void) => {
    clearTimeout(timers.get(kind));
    timers.set(
      kind,
      setTimeout(() => {
        timers.delete(kind);
        fn();
      }, debounceMs),
    );
  };
  const dir = resolve(o.dir);
  const configDir = o.configFile ? dirname(resolve(o.configFile)) : undefined;
  const configName = o.configFile ? basename(o.configFile) : undefined;
  const watchers: FSWatcher[] = [];
  const listen = (path: string, forFlows: boolean, forConfig: boolean) => {
    const w = watch(path, { persistent: false }, (_event, filename) => {
      const name = filename === null ? undefined : String(filename);
      if (forConfig && (name === undefined || name === configName) && o.onConfig) later('config', o.onConfig);
      if (forFlows && (name === undefined || isFlowFileName(name))) later('flows', o.onFlows);
    });
    w.on('error', (err) => o.onError?.(err));
    watchers.push(w);
  };
  listen(dir, true, configDir === dir);
  if (configDir !== undefined && configDir !== dir) listen(configDir, false, true);
  return {
    close() {
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      for (const w of watchers) w.close();
    },
  };
}

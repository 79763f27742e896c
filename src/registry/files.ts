/**
 * The flow files as the registry last checked them, by path: each file's content hash, check
 * result and (once admitted) compiled flow. A text is checked and compiled once: a reload
 * that finds the same text in the same file reuses both (the CompiledFlow stays the same
 * object). The check result depends on the path too (the default flow name, positions),
 * so the same text under another path is checked again.
 *
 * Also `compileAll` (check, refuse, compile a list of texts: the tools' one-shot load) and
 * the refusal rules it shares with the registry (`admit`).
 */
import { basename } from 'node:path';
import { checkFlow, type CheckOptions, type CheckResult } from '../flow/check.js';
import { compileFlow, flowVersion, fromConfig, type CompiledFlow } from '../engine/compile.js';
import { compileConfig } from '../flow/compile.js';
import type { ModuleStates } from '../flow/machine-config.js';
import type { FlowModel } from '../flow/model.js';
import { hasErrors, type Diagnostic } from '../errors/diagnostic.js';
import type { CheckFn, FlowFile } from './checker.js';
import { linkFlows, type LinkLimits } from '../flow/link.js';
import { makeBundle, unbundle } from './bundle.js';

export interface LoadReport {
  /** Every diagnostic of every file (warnings of loaded flows included). */
  diagnostics: Diagnostic[];
  /** File text by path, for code frames. */
  sources: Map<string, string>;
  /** Files refused because of errors. */
  refused: string[];
  /**
   * What a version of a flow that enters modules is rebuilt from (shared versions,
   * rollbacks): its text and its modules' in one bundle (bundle.ts), by file.
   */
  bundles?: Map<string, string>;
  /** Module files (version 2 `module:`), compiled on their own for the tools (compileAll); never served. */
  modules?: CompiledFlow[];
}

/** Where a reload's time went, in ms. */
export interface ReloadTimings {
  /** Checking the new texts: waiting for the checker (`reloadAsync`), or on this thread (`reload`). */
  checkMs: number;
  /** compileFlow, on this thread (the sum over the files compiled). */
  compileMs: number;
  /** The rest of the synchronous publish on this thread (impact reports included). */
  applyMs: number;
}

/** A flow file's text with its content hash. */
export interface FlowText extends FlowFile {
  hash: string;
}

interface FileState {
  hash: string;
  result: CheckResult;
  compiled?: CompiledFlow;
}

interface Checked extends FlowFile {
  result: CheckResult;
}

/** Checks and compiles flow texts; flows with errors (or a taken name) are refused. */
export function compileAll(
  files: { file: string; text: string }[],
  opts: CheckOptions = {},
): { flows: CompiledFlow[]; report: LoadReport } {
  return admit(
    files.flatMap(unbundle).map((f) => ({ ...f, result: checkFlow(f.text, f.file, opts) })),
    (f, model, linked, shared) => compileFlow(model, f.text, linked, shared),
  );
}

export const noTimings = (): ReloadTimings => ({ checkMs: 0, compileMs: 0, applyMs: 0 });

/** Lets the event loop run what is waiting (requests) before going on. */
export const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class FlowFiles {
  private readonly states = new Map<string, FileState>();

  /** `limits`: the link stage's bounds (tests lower them). */
  constructor(
    private readonly check: CheckFn = checkFlow,
    private readonly limits: LinkLimits = {},
  ) {}

  hashed(files: readonly FlowFile[]): FlowText[] {
    return files.map((f) => ({ file: f.file, text: f.text, hash: flowVersion(f.text) }));
  }

  /** The files whose text has not been checked yet. */
  stale(files: readonly FlowText[]): FlowText[] {
    return files.filter((f) => this.states.get(f.file)?.hash !== f.hash);
  }

  /**
   * Keeps the check results of `stale` (checked elsewhere: a worker) and compiles the clean
   * ones one at a time, each in its own turn of the event loop.
   */
  async take(stale: readonly FlowText[], results: readonly CheckResult[], timings: ReloadTimings): Promise<void> {
    for (const [i, f] of stale.entries()) {
      const state: FileState = { hash: f.hash, result: results[i]! };
      this.states.set(f.file, state);
      const { model } = state.result;
      if (!model || hasErrors(state.result.diagnostics)) continue;
      // a flow that enters modules is compiled once linked (admit), with its modules; a module is never served
      if (model.module || Object.values(model.steps).some((s) => s.kind === 'subflow')) continue;
      await yieldToLoop();
      // Compiled even if its name turns out to be taken: rare, and a later reload may admit it.
      if (this.states.get(f.file) !== state) continue;
      // Two turns: the machine config (plain data), then the xstate machine made from it.
      let t = performance.now();
      const config = compileConfig(model, f.text);
      timings.compileMs += performance.now() - t;
      await yieldToLoop();
      if (this.states.get(f.file) !== state) continue;
      t = performance.now();
      state.compiled = fromConfig(config);
      timings.compileMs += performance.now() - t;
    }
  }

  /**
   * The files (all of them, in order) admitted or refused; a text not checked yet is checked
   * here, an admitted flow not compiled yet is compiled here. Files not listed are forgotten.
   */
  admit(files: readonly FlowText[], timings: ReloadTimings): { flows: CompiledFlow[]; report: LoadReport } {
    const states = new Map<string, FileState>();
    const checked = this.checked(files, timings, states);
    return admit(
      checked,
      (f, model, version, shared) => {
        const state = states.get(f.file)!;
        if (state.compiled && state.compiled.version === (version ?? state.hash)) return state.compiled;
        const t = performance.now();
        state.compiled = compileFlow(model, f.text, version, shared);
        timings.compileMs += performance.now() - t;
        return state.compiled;
      },
      { link: this.limits, modules: false },
    );
  }

  /**
   * The report of `admit` (diagnostics, refusals) without compiling anything: what an editor shows after each
   * change. Texts already checked are not checked again.
   */
  diagnose(files: readonly FlowText[]): LoadReport {
    const checked = this.checked(files, noTimings(), new Map());
    return admit(checked, () => undefined as never, { link: this.limits, compile: false }).report;
  }

  /**
   * The files with their check results: a text not checked yet is checked here (its time added to `timings`).
   * Files not listed are forgotten.
   */
  private checked(files: readonly FlowText[], timings: ReloadTimings, states: Map<string, FileState>): Checked[] {
    const listed = new Set(files.map((f) => f.file));
    for (const file of [...this.states.keys()]) if (!listed.has(file)) this.states.delete(file);
    return files.map((f): Checked => {
      let state = this.states.get(f.file);
      if (state?.hash !== f.hash) {
        const t = performance.now();
        state = { hash: f.hash, result: this.check(f.text, f.file) };
        timings.checkMs += performance.now() - t;
        this.states.set(f.file, state);
      }
      states.set(f.file, state);
      return { file: f.file, text: f.text, result: state.result };
    });
  }

  /** The check result of a file, as last checked (diagnose or admit). */
  result(file: string): CheckResult | undefined {
    return this.states.get(file)?.result;
  }
}

interface AdmitOptions {
  /** The link stage's bounds (tests lower them). */
  link?: LinkLimits;
  /** false: modules are not compiled on their own (the server, which never serves them); default true (the tools). */
  modules?: boolean;
  /** false: nothing is compiled, only the diagnostics are made (the language server); default true. */
  compile?: boolean;
}

/**
 * Given the check results, in order: refuses files with errors or a taken name, compiles the others. The machine
 * states of a module are made once in this load, shared by the flows that enter it (`shared`, dropped afterwards).
 */
function admit(
  files: Checked[],
  compile: (f: Checked, model: FlowModel, version: string | undefined, shared: ModuleStates) => CompiledFlow,
  opts: AdmitOptions = {},
): { flows: CompiledFlow[]; report: LoadReport } {
  const report: LoadReport = { diagnostics: [], sources: new Map(), refused: [], bundles: new Map(), modules: [] };
  const flows: CompiledFlow[] = [];
  const byName = new Map<string, string>();
  const link = linkFlows(files, opts.link);
  const shared: ModuleStates = new Map();
  // A flow the checker passed but the compiler cannot build is a bug of callscript: refused
  // with INTERNAL_ERROR at 1:1 (the others still load), never a crash of the server or the tools.
  const build = (f: Checked, model: FlowModel, version: string | undefined): CompiledFlow | undefined => {
    if (opts.compile === false) return undefined;
    try {
      return compile(f, model, version, shared);
    } catch (err) {
      report.diagnostics.push({
        code: 'INTERNAL_ERROR',
        severity: 'error',
        message: `the flow could not be compiled: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
        file: f.file,
        line: 1,
        column: 1,
        hint: 'Please report it with the file (and the modules it enters); the flow is refused meanwhile.',
      });
      report.refused.push(f.file);
      return undefined;
    }
  };
  for (const f of files) {
    const { file, text } = f;
    report.sources.set(file, text);
    const linkDiags = link.diagnostics.get(file) ?? [];
    const diagnostics = linkDiags.length ? [...f.result.diagnostics, ...linkDiags] : f.result.diagnostics;
    const linked = link.linked.get(file);
    const model = linked?.model ?? f.result.model;
    report.diagnostics.push(...diagnostics);
    if (model?.module && !hasErrors(diagnostics)) {
      if (link.failed.has(file)) continue; // in a cycle, or entering a module that fails: its callers say why
      // a module: compiled on its own for the tools (scenarios, graph), never served nor refused
      const built = opts.modules === false ? undefined : build(f, model, linked?.version);
      if (built) report.modules!.push(built);
      continue;
    }
    if (!model || hasErrors(diagnostics)) {
      report.refused.push(file);
      continue;
    }
    const taken = byName.get(model.name);
    if (taken) {
      report.diagnostics.push({
        code: 'DUPLICATE_FLOW_NAME',
        severity: 'error',
        message:
          `flow name "${model.name}" is already used by ${basename(taken)}, which keeps it: it was admitted ` +
          `first (a file already serving a flow comes first, then files in name order)`,
        file,
        line: model.namePos?.line ?? 1,
        column: model.namePos?.column ?? 1,
        hint: 'Give each flow a distinct `name:` (or rename the file when the name comes from it).',
      });
      report.refused.push(file);
      continue;
    }
    byName.set(model.name, file);
    const built = build(f, model, linked?.version);
    if (!built) continue;
    if (linked) report.bundles!.set(file, makeBundle(file, text, linked.modules));
    flows.push(built);
  }
  return { flows, report };
}

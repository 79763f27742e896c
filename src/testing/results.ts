/**
 * The results a command can return (its result set in src/protocol/commands.ts, through
 * the flow language's actions in src/flow/actions.ts), as the scenario tools need them:
 * the runner refuses a scenario result that can never come (`resultProblem`), and `paths`
 * only ever writes results that can (`isPossibleResult`).
 */
import { ACTION_SPECS, isAction } from '../flow/actions.js';
import { didYouMean } from '../flow/check-context.js';
import { COMMANDS } from '../protocol/commands.js';

/** The most keys a read can return (the catalogue's bound of max_digits). */
export function readMaxDigits(): number {
  const spec = COMMANDS.read.params.max_digits;
  return spec?.type === 'int' ? spec.max : 20;
}

const KEYS = /^[0-9*]+$/;

/** What `command` returns, in words (for messages). */
export function resultsText(command: string, maxDigits?: number): string {
  if (!isAction(command)) return `${command} is not a command`;
  const set = ACTION_SPECS[command].results;
  switch (set.kind) {
    case 'enum':
      return set.values.length === 1
        ? `${command} returns only ${set.values[0]}`
        : `${command} returns ${set.values.slice(0, -1).join(', ')} or ${set.values.at(-1)}`;
    case 'digits': {
      const n =
        maxDigits === undefined
          ? 'the keys pressed (0-9 and *)'
          : `${maxDigits === 1 ? 'one key' : `1 to ${maxDigits} keys`} of 0-9 and * (max_digits: ${maxDigits})`;
      return `${command} returns ${n}, or ${set.also.join(', ')}`;
    }
    case 'any':
      return `${command} returns ${set.doc}`;
    case 'none':
      return `${command} returns no result (the empty string)`;
  }
}

/**
 * Why `command` can never return `value` (with `maxDigits`, the read's actual or expected
 * max_digits, when known), or undefined when it can. The message lists what the command
 * returns and, for a near miss, a did-you-mean.
 */
export function resultProblem(command: string, value: string, maxDigits?: number): string | undefined {
  if (!isAction(command)) return undefined;
  const set = ACTION_SPECS[command].results;
  const no = `"${value}" is not a result of ${command}: ${resultsText(command, maxDigits)}`;
  switch (set.kind) {
    case 'any':
      return undefined;
    case 'none':
      return value === '' ? undefined : `${no}; leave result out`;
    case 'enum': {
      if (set.values.includes(value)) return undefined;
      const dym = KEYS.test(value) && set.values.every((v) => KEYS.test(v)) ? undefined : didYouMean(value, set.values);
      return dym ? `${no}; ${dym}` : no;
    }
    case 'digits': {
      if (set.also.includes(value)) return undefined;
      if (KEYS.test(value)) {
        const max = maxDigits ?? readMaxDigits();
        return value.length <= max ? undefined : `${no}; "${value}" has ${value.length} keys`;
      }
      const stripped = value.replace(/#/g, '');
      if (stripped !== value && KEYS.test(stripped))
        return `${no}; # ends the input and is not part of the result: did you mean '${stripped}'?`;
      const dym = didYouMean(value, set.also);
      return dym ? `${no}; ${dym}` : no;
    }
  }
}

/** Whether `command` can return `value`. */
export function isPossibleResult(command: string, value: string, maxDigits?: number): boolean {
  return resultProblem(command, value, maxDigits) === undefined;
}

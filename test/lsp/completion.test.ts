import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompletionItem, CompletionList } from 'vscode-languageserver';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACTIONS, ALLOWED } from '../../src/flow/check-steps.js';
import { TOP_KEYS } from '../../src/flow/check.js';
import { CALL_FIELDS } from '../../src/flow/check-vars.js';
import { MAX_DEPTH } from '../../src/flow/yaml.js';
import { COMMANDS } from '../../src/protocol/commands.js';
import { MAX_ITEMS } from '../../src/lsp/completion.js';
import { lspClient, type TestClient } from './client.js';
import { BANK, PIN_CHECK, at, doc, edit } from './fixtures.js';

let dir: string;
let file: string;
let client: TestClient;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lsp-'));
  file = join(dir, 'bank.yaml');
  writeFileSync(join(dir, 'pin-check.yaml'), PIN_CHECK);
  writeFileSync(file, BANK);
  client = await lspClient(dir);
  client.open(file, BANK);
});
afterEach(async () => {
  // a hover waits for the pending check of the directory: nothing is published once the connection is gone
  await client.request('textDocument/hover', doc(file, 0, 0));
  await client.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** The completion at the mark of `text` (the document changed to it first). */
async function complete(text: string, path = file): Promise<CompletionList | null> {
  const c = at(text);
  client.change(path, c.text);
  return client.request<CompletionList | null>('textDocument/completion', doc(path, c.line, c.character));
}

const labels = (l: CompletionList | null) => l?.items.map((i) => i.label);
const STEPS = ['welcome', 'hours', 'menu', 'verify', 'lookup', 'goodbye', 'end'];

describe('step ids', () => {
  it('are offered after next:, with the action of each, replacing the word typed', async () => {
    const list = await complete(edit(BANK, 'next: end', 'next: go‸'));
    expect(list?.isIncomplete).toBe(false);
    expect(labels(list)).toEqual(STEPS);
    const goodbye = list!.items.find((i) => i.label === 'goodbye')!;
    expect(goodbye).toMatchObject({
      detail: 'step: say',
      textEdit: { range: { start: { line: 40, character: 10 }, end: { line: 40, character: 12 } }, newText: 'goodbye' },
    });
  });

  it('are offered after goto: inside a flow map, start:, and as the value of a result key', async () => {
    const flowMap = await complete(edit(BANK, 'TIMEOUT: goodbye,', 'TIMEOUT: { goto: ‸ },'));
    expect(labels(flowMap)).toEqual(STEPS);
    expect(labels(await complete(edit(BANK, 'start: welcome', 'start: ‸')))).toEqual(STEPS);
    expect(labels(await complete(edit(BANK, 'on: { ok: goodbye,', 'on: { ok: ‸')))).toEqual(STEPS);
    expect(
      labels(await complete(edit(BANK, '    on: { open: menu, closed: goodbye }', '    on:\n      open: ‸'))),
    ).toEqual(STEPS);
  });

  it('include a step the text declares since the last check, while the YAML does not parse', async () => {
    // an unclosed flow map: the text has no tree, the step is in the text
    const broken = `${BANK}  extra:\n    say: "x"\n    on: { "1": \n`;
    const list = await complete(edit(broken, 'next: end', 'next: ‸'));
    expect(labels(list)).toEqual([...STEPS, 'extra']);
  });
});

describe('step keys', () => {
  it('offers every action in an empty step, each with its doc line', async () => {
    const list = await complete(edit(BANK, '  end:\n    hangup: {}\n', '  end:\n    ‸\n'));
    expect(labels(list)).toEqual(ACTIONS);
    const read = list!.items.find((i) => i.label === 'read')!;
    expect(read).toMatchObject({ detail: 'command', textEdit: { newText: 'read: ' } });
    expect(read.documentation).toEqual({
      kind: 'markdown',
      value: `${COMMANDS.read.doc} Results: the keys pressed, or TIMEOUT.`,
    });
  });

  it('offers the keys that go with the action, less those written', async () => {
    const list = await complete(edit(BANK, '    save: choice\n', '    save: choice\n    ‸\n'));
    expect(labels(list)).toEqual(ALLOWED.command.filter((k) => !['save', 'on'].includes(k)));
  });

  it("offers a command's params with their bounds, less those given (a param given by its alias too)", async () => {
    const list = await complete(edit(BANK, 'max_digits: 1 }', 'max_digits: 1, ‸ }'));
    expect(list?.items.map((i) => [i.label, i.detail])).toEqual([
      ['attempts', 'integer 1..10, default 3'],
      ['timeout_ms', 'integer 100..30000, default 5000'],
    ]);
  });

  it('offers the result keys of the step under on:, with TIMEOUT, default and error as they apply', async () => {
    const read = edit(BANK, '    on: { "1": verify, TIMEOUT: goodbye, default: menu }', '    on:\n      ‸');
    expect(labels(await complete(read))).toEqual(['TIMEOUT', 'default', 'error']);
    const http = edit(BANK, '    on: { ok: goodbye, default: goodbye }', '    on: { ok: goodbye, ‸ }');
    expect(labels(await complete(http))).toEqual(['timeout', 'error', 'default']);
    const calendar = edit(BANK, '    on: { open: menu, closed: goodbye }', '    on: { open: menu, ‸ }');
    expect(labels(await complete(calendar))).toEqual(['closed', 'holiday']);
    const subflow = edit(BANK, '    on: { verified: lookup, locked: goodbye }', '    on: { verified: lookup, ‸ }');
    expect(labels(await complete(subflow))).toEqual(['locked', 'default']);
  });

  it('quotes a result key that YAML would read as a number', async () => {
    const list = await complete(edit(BANK, '    hangup: {}', '    play: "Bye."\n    on:\n      ‸'));
    expect(list?.items.map((i) => i.textEdit?.newText)).toEqual(['"0": ', '"1": ', 'default: ', 'error: ']);
  });

  it('offers the keys of the top level not written yet', async () => {
    const list = await complete(edit(BANK, 'name: bank\n', 'name: bank\n‸\n'));
    const written = ['version', 'name', 'start', 'secrets', 'vars', 'calendars', 'languages', 'prompts'];
    expect(labels(list)).toEqual(TOP_KEYS.filter((k) => ![...written, 'environments', 'steps'].includes(k)));
  });

  it('offers enumerated values and the flow-wide handlers of commands with results', async () => {
    const ringtone = edit(BANK, '    hangup: {}', '    dialout:\n      targets: ["+442079460100"]\n      ringtone: ‸');
    expect(labels(await complete(ringtone))).toEqual(['MUSIC', 'RING']);
    const handlers = await complete(edit(BANK, 'steps:\n', 'handlers:\n  on:\n    ‸\nsteps:\n'));
    expect(labels(handlers)).toEqual([
      'conference',
      'dialout',
      'play',
      'play_record',
      'play_talk_detect',
      'play_wav_data',
      'read',
      'send_dtmf',
      'wait',
      'wait_for_silence',
    ]);
  });
});

describe('the keys of each construct, from the checker', () => {
  it('offers the keys of a branch, a loop, valid, a switch case, a calendar, the handlers, a module', async () => {
    const branch = edit(BANK, 'TIMEOUT: goodbye,', 'TIMEOUT: { retry: 2, ‸ },');
    expect(labels(await complete(branch))).toEqual(['goto', 'then', 'say', 'save']);
    const loop = edit(BANK, '  end:\n', '  each:\n    foreach: { in: vars.list, ‸ }\n  end:\n');
    expect(labels(await complete(loop))).toEqual(['as', 'index', 'max']);
    const valid = edit(BANK, '    save: choice\n', '    save: choice\n    valid:\n      ‸\n');
    expect(labels(await complete(valid))).toEqual(['when', 'else']);
    const sw = edit(BANK, '  end:\n', '  route:\n    switch:\n      - ‸\n  end:\n');
    expect(labels(await complete(sw))).toEqual(['when', 'goto']);
    const cal = edit(BANK, '    timezone: Europe/London\n', '    timezone: Europe/London\n    ‸\n');
    expect(labels(await complete(cal))).toEqual(['holidays', 'exceptions']);
    const days = edit(BANK, '    weekly: { mon-fri: "09:00-17:00" }', '    weekly:\n      ‸');
    expect(labels(await complete(days))).toEqual(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
    const handlers = edit(BANK, 'steps:\n', 'handlers:\n  ‸\nsteps:\n');
    expect(labels(await complete(handlers))).toEqual(['hangup', 'error', 'on']);
  });

  it("offers a module's results after return:, its returns under values: and a subflow's save:", async () => {
    // the module as its directory was checked last: first as written
    expect(labels(await complete(edit(BANK, 'save: { holder: name }', 'save: { holder: ‸ }')))).toEqual(['name']);
    const mod = join(dir, 'pin-check.yaml');
    client.open(mod, PIN_CHECK);
    expect(labels(await complete(edit(PIN_CHECK, 'return: locked', 'return: ‸'), mod))).toEqual(['verified', 'locked']);
    const values = edit(PIN_CHECK, 'values: { name: "Ann" }', 'values: { ‸ }');
    expect(labels(await complete(values, mod))).toEqual(['name']);
    expect(labels(await complete(edit(PIN_CHECK, '  returns: [name]', '  ‸'), mod))).toEqual(['returns']);
  });

  it('offers variables as the items of sensitive:', async () => {
    expect(
      labels(await complete(edit(BANK, 'secrets: [BANK_TOKEN]', 'secrets: [BANK_TOKEN]\nsensitive: [‸]'))),
    ).toEqual(['tries', 'choice', 'holder']);
  });
});

describe('names in templates and conditions', () => {
  it('offers variables after vars. in a template, and the call fields after call.', async () => {
    const vars = await complete(edit(BANK, '{{ vars.holder }}', '{{ vars.h‸ }}'));
    expect(labels(vars)).toEqual(['tries', 'choice', 'holder']);
    expect(vars!.items[2]!.textEdit).toEqual({
      range: { start: { line: 39, character: 26 }, end: { line: 39, character: 27 } },
      newText: 'holder',
    });
    // the flow has languages: call.language is a field too
    expect(labels(await complete(edit(BANK, '{{ vars.holder }}', '{{ call.‸ }}')))).toEqual([
      ...CALL_FIELDS,
      'language',
    ]);
  });

  it('offers environment keys after env. and secrets after secrets.', async () => {
    expect(labels(await complete(edit(BANK, '{{ env.api }}', '{{ env.‸ }}')))).toEqual(['api']);
    expect(labels(await complete(edit(BANK, '{{ secrets.BANK_TOKEN }}', '{{ secrets.B‸ }}')))).toEqual(['BANK_TOKEN']);
  });

  it('offers variables and calendars in a condition', async () => {
    const step = (cond: string) =>
      edit(BANK, '  end:\n', `  check:\n    when: ${cond}\n    then: end\n    else: end\n  end:\n`);
    expect(labels(await complete(step('"vars.tries > 1 && vars.‸"')))).toEqual(['tries', 'choice', 'holder']);
    expect(labels(await complete(step("'open(\"‸'")))).toEqual(['office']);
    expect(labels(await complete(step('"‸"')))).toEqual(['vars', 'call', 'env', 'secrets']);
  });
});

describe('names of the flow and its directory', () => {
  it('offers prompts in a { prompt: } media and calendars in a calendar step', async () => {
    expect(labels(await complete(edit(BANK, 'say: { prompt: hello }', 'say: { prompt: h‸ }')))).toEqual(['hello']);
    expect(labels(await complete(edit(BANK, 'calendar: office', 'calendar: ‸')))).toEqual(['office']);
  });

  it("offers the directory's modules after flow:, and the module's params under with:", async () => {
    const flow = await complete(edit(BANK, '{ flow: pin-check,', '{ flow: ‸'));
    expect(flow?.items.map((i) => [i.label, i.detail])).toEqual([['pin-check', 'module']]);
    const block = edit(
      BANK,
      '    subflow: { flow: pin-check, with: { account: "{{ vars.choice }}" } }',
      '    subflow:\n      flow: pin-check\n      with:\n        ‸',
    );
    expect((await complete(block))?.items.map((i) => [i.label, i.detail])).toEqual([
      ['account', 'required'],
      ['tries', 'default 3'],
    ]);
    const inline = await complete(edit(BANK, 'account: "{{ vars.choice }}" }', 'account: "{{ vars.choice }}", ‸ }'));
    expect(labels(inline)).toEqual(['tries']);
  });

  it("offers the languages under a prompt, and the other environments' keys in an environment", async () => {
    expect(labels(await complete(edit(BANK, '    fr-FR: "Bonjour."\n', '    ‸\n')))).toEqual(['fr-FR']);
    const envs = edit(BANK, '  production: { api: "https://api.example" }', '  production: { ‸ }');
    expect(labels(await complete(envs))).toEqual(['api']);
  });
});

describe('hostile input', () => {
  it('answers null past the last line, and in a comment', async () => {
    expect(await client.request('textDocument/completion', doc(file, 10_000, 0))).toBeNull();
    expect(await client.request('textDocument/completion', doc(file, -1, 0))).toBeNull();
    expect(await complete(edit(BANK, 'next: end', 'next: end # go to ‸'))).toBeNull();
  });

  it('takes a column past the end of the line as its end', async () => {
    client.change(file, edit(BANK, 'next: end', 'next: '));
    const list = await client.request<CompletionList>('textDocument/completion', doc(file, 40, 500));
    expect(labels(list)).toEqual(STEPS);
  });

  it('offers nothing in a YAML file that is no flow, outside a flows directory', async () => {
    const compose = join(dir, 'docker-compose.yml');
    client.open(compose, 'services:\n  web:\n    image: nginx\n');
    // at the top level, where a flow would get its top-level keys
    const list = await client.request('textDocument/completion', doc(compose, 3, 0));
    expect(list).toBeNull();
    const flows = join(dir, 'flows');
    mkdirSync(flows);
    const fresh = join(flows, 'new.yaml');
    client.open(fresh, 'version: 1\n');
    expect(labels(await client.request<CompletionList>('textDocument/completion', doc(fresh, 1, 0)))).toContain(
      'steps',
    );
  });

  it('completes an unsaved buffer (no file: URI) from its text alone', async () => {
    const uri = 'untitled:Untitled-1';
    const c = at(edit(BANK, 'next: end', 'next: ‸'));
    await client.rpc.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'yaml', version: 1, text: c.text },
    });
    const list = await client.request<CompletionList>('textDocument/completion', {
      textDocument: { uri },
      position: { line: c.line, character: c.character },
    });
    expect(labels(list)).toEqual(STEPS);
  });

  it('reads a pathological line in one pass: flow maps nested deep, 50,000 keys, tags, 200,000 spaces', async () => {
    const nested = (n: number) => `    next: ${'{ goto: x, a: '.repeat(n)}{ goto: ‸`;
    expect(labels(await complete(edit(BANK, '    next: end', nested(MAX_DEPTH - 1))))).toEqual(STEPS);
    // deeper than a flow may nest (TOO_DEEP): nothing is offered, and the rest of the line is not read
    expect(await complete(edit(BANK, '    next: end', nested(50_000)))).toBeNull();
    const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}: end`).join(', ');
    const wide = await complete(edit(BANK, '    next: end', `    on: { ${keys}, ‸`));
    expect(labels(wide)).toEqual(['0', '1', 'default', 'error']);
    const tags = await complete(edit(BANK, '{{ vars.holder }}', `${'{{ vars.'.repeat(50_000)}‸`));
    expect(labels(tags)).toEqual(['tries', 'choice', 'holder']);
    const spaces = await complete(edit(BANK, '    next: end', `    next:${' '.repeat(200_000)}‸`));
    expect(labels(spaces)).toEqual(STEPS);
  });
});

describe('a flow of 10,000 steps', () => {
  it('offers the steps matching the word typed, MAX_ITEMS at most, marked incomplete', async () => {
    const { bigFlow } = await import('../helpers/big-flow.js');
    const big = join(dir, 'big.yaml');
    const text = `${bigFlow(10_000)}  extra:\n    say: "x"\n    next: ‸`;
    client.open(big, at(text).text);
    const all = await complete(text, big);
    expect(all?.isIncomplete).toBe(true);
    expect(all?.items).toHaveLength(MAX_ITEMS);
    // menu_99, menu_990 to menu_999, menu_9900 to menu_9998
    const some = await complete(text.replace('next: ‸', 'next: menu_99‸'), big);
    expect(some?.isIncomplete).toBe(true);
    expect(some?.items.map((i: CompletionItem) => i.label)).toHaveLength(110);
  });
});

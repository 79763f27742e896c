import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { validate } from '../../src/cli/validate.js';
import { schema } from '../../src/cli/schema.js';
import { errors } from '../../src/cli/errors.js';
import { CLI } from '../helpers/cli.js';

const root = new URL('../..', import.meta.url).pathname;

function capture(): { out: Writable; text: () => string } {
  let s = '';
  return {
    out: new Writable({
      write(chunk, _e, cb) {
        s += chunk.toString();
        cb();
      },
    }),
    text: () => s,
  };
}

describe('callscript validate', () => {
  it('passes the example flows with no problems', async () => {
    const c = capture();
    expect(await validate([join(root, 'flows')], c.out)).toBe(0);
    expect(c.text()).toBe('10 files checked, 10 valid: no problems\n');
  });

  it('links a file named alone with the modules of its directory, and reports that file only', async () => {
    const c = capture();
    expect(await validate([join(root, 'flows/bank-line.yaml')], c.out)).toBe(0);
    expect(c.text()).toBe('1 file checked, 1 valid: no problems\n');
    // the module broken: the caller says so at its flow: value; the module's own errors are not listed as the caller's
    const d = mkdtempSync(join(tmpdir(), 'callscript-link-'));
    copyFileSync(join(root, 'flows/bank-line.yaml'), join(d, 'bank-line.yaml'));
    writeFileSync(
      join(d, 'verify-customer.yaml'),
      readFileSync(join(root, 'flows/verify-customer.yaml'), 'utf8').replace(
        'results: [verified, locked, failed]',
        'results: [verified, failed]',
      ),
    );
    const e = capture();
    expect(await validate([join(d, 'bank-line.yaml')], e.out)).toBe(1);
    expect(e.text()).toMatch(/bank-line\.yaml:97:13 error MODULE_INVALID/);
    expect(e.text()).not.toMatch(/^\S*verify-customer\.yaml:\d+:\d+ error/m);
    expect(e.text()).toMatch(/1 file checked, 0 valid: 1 error/);
  });

  it('prints file:line:col severity CODE message, a code frame and a hint; exit 1 on errors', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    const file = join(d, 'bad.yaml');
    writeFileSync(file, 'version: 1\nstart: a\nsteps:\n  a:\n    wait: 31\n    next: a2\n');
    const c = capture();
    expect(await validate([d], c.out)).toBe(1);
    const text = c.text();
    expect(text).toContain(`${file}:5:11 error OUT_OF_BOUNDS step 'a': wait must be between 1 and 30, got 31\n`);
    expect(text).toContain('5 |     wait: 31\n  |           ^^\n');
    expect(text).toContain(`${file}:6:11 error UNKNOWN_STEP`);
    expect(text).toMatch(/hint: /);
    expect(text.trimEnd().split('\n').at(-1)).toBe('1 file checked, 0 valid: 2 errors, 0 warnings');
  });

  it('warnings alone exit 0; a missing path is an error', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    writeFileSync(
      join(d, 'warn.yaml'),
      'version: 1\nstart: a\nsteps:\n  a:\n    read: { prompt: "Press 1", max_digits: 1 }\n    on: { "1": b ' +
        '}\n  b: { hangup: {} }\n',
    );
    const c = capture();
    expect(await validate([d], c.out)).toBe(0);
    expect(c.text()).toContain('warning UNHANDLED_RESULT');
    const c2 = capture();
    expect(await validate([join(d, 'nope.yaml')], c2.out)).toBe(1);
    expect(c2.text()).toContain('error UNREADABLE_FILE no such file or directory: ');
  });

  it('checks callscript.yaml when named', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    writeFileSync(join(d, 'callscript.yaml'), 'server: { port: 3000 }\nroutes: { numbers: { "12345": x } }\n');
    const c = capture();
    expect(await validate([join(d, 'callscript.yaml')], c.out)).toBe(1);
    expect(c.text()).toMatch(/callscript\.yaml:2:\d+ error BAD_FORMAT/);
    expect(c.text().trimEnd().split('\n').at(-1)).toBe(
      '1 file checked (0 flows, 1 config), 0 valid: 1 error, 0 warnings',
    );
  });

  it('counts config files in the summary', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    writeFileSync(join(d, 'callscript.yaml'), 'server: { port: 3000 }\n');
    writeFileSync(join(d, 'hello.yaml'), 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n');
    const c = capture();
    expect(await validate([join(d, 'hello.yaml'), join(d, 'callscript.yaml')], c.out)).toBe(0);
    expect(c.text()).toBe('2 files checked (1 flow, 1 config), 2 valid: no problems\n');
  });

  it('--config checks a config file under another name as a config, not as a flow', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    const prod = join(d, 'prod.yaml');
    writeFileSync(prod, 'server:\n  port: 8080\nroutes:\n  default: front-desk\n');
    const c = capture();
    expect(await validate([join(root, 'flows')], c.out, { configs: [prod] })).toBe(0);
    expect(c.text()).toBe('11 files checked (10 flows, 1 config), 11 valid: no problems\n');
    // as a flow it would be refused (no version, no steps...)
    const asFlow = capture();
    expect(await validate([prod], asFlow.out)).toBe(1);

    writeFileSync(join(d, 'staging.yaml'), 'server:\n  prot: 8080\n');
    const bad = capture();
    expect(await validate([], bad.out, { configs: [prod, join(d, 'staging.yaml')] })).toBe(1);
    expect(bad.text()).toContain(`${join(d, 'staging.yaml')}:2:3 error UNKNOWN_KEY server: unknown key 'prot'\n`);
    expect(bad.text()).toContain("hint: did you mean 'port'?");
    expect(bad.text().trimEnd().split('\n').at(-1)).toBe(
      '2 files checked (0 flows, 2 configs), 1 valid: 1 error, 0 warnings',
    );
  });

  it('--config: a file inside a directory given is checked once, as a config', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    writeFileSync(join(d, 'prod.yaml'), 'server: { port: 8080 }\n');
    writeFileSync(join(d, 'hello.yaml'), 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n');
    const c = capture();
    expect(await validate([d], c.out, { configs: [join(d, 'prod.yaml')] })).toBe(0);
    expect(c.text()).toBe('2 files checked (1 flow, 1 config), 2 valid: no problems\n');
    const missing = capture();
    expect(await validate([], missing.out, { configs: [join(d, 'nope.yaml')] })).toBe(1);
    expect(missing.text()).toContain('error UNREADABLE_FILE no such file or directory: ');
  });

  it('with no argument: the flows directory of ./callscript.yaml, and the config itself', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    writeFileSync(join(d, 'callscript.yaml'), 'server: { flows_dir: ivr }\n');
    mkdirSync(join(d, 'ivr'));
    writeFileSync(join(d, 'ivr', 'hello.yaml'), 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n');
    const c = capture();
    expect(await validate([], c.out, { cwd: d })).toBe(0);
    expect(c.text()).toBe('2 files checked (1 flow, 1 config), 2 valid: no problems\n');
  });

  it('with no argument and no flows directory: the path alone, no line:col, and what to do', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    const c = capture();
    expect(await validate([], c.out, { cwd: d })).toBe(1);
    const lines = c.text().split('\n');
    expect(lines[0]).toBe(`${join(d, 'flows')} error UNREADABLE_FILE no such file or directory: ${join(d, 'flows')}`);
    expect(lines[1]).toBe(
      "hint: Run callscript validate in your project's directory (where flows/ or callscript.yaml is), or " +
        'name the flow files or directories to check: callscript validate path/to/flows',
    );
  });

  it('checks that routes name flows it knows, at the route, with a suggestion', async () => {
    const d = mkdtempSync(join(tmpdir(), 'callscript-validate-'));
    writeFileSync(join(d, 'callscript.yaml'), 'routes:\n  numbers: { "+33123456789": front-dsk }\n  default: hello\n');
    mkdirSync(join(d, 'flows'));
    writeFileSync(join(d, 'flows', 'front-desk.yaml'), 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n');
    writeFileSync(join(d, 'flows', 'hello.yaml'), 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n');
    const c = capture();
    expect(await validate([], c.out, { cwd: d })).toBe(1);
    const lines = c.text().split('\n');
    expect(lines[0]).toBe(
      'callscript.yaml:2:30 error UNKNOWN_ROUTE_FLOW routes.numbers["+33123456789"] names flow "front-dsk", ' +
        'which is not among the flows checked: calls routed there would get 404 UNKNOWN_FLOW',
    );
    expect(lines).toContain("hint: did you mean 'front-desk'?");
    expect(lines.at(-2)).toBe('3 files checked (2 flows, 1 config), 2 valid: 1 error, 0 warnings');
    // Only --config: against the config's flows directory.
    const only = capture();
    expect(await validate([], only.out, { configs: [join(d, 'callscript.yaml')] })).toBe(1);
    expect(only.text()).toContain(
      'names flow "front-dsk", which is not among the flows checked (the config\'s flows directory)',
    );
  });

  it('a reader that goes away (validate flows | head -1) ends it quietly, with no EPIPE stack trace', async () => {
    const child = spawn(process.execPath, [...CLI, 'validate', join(root, 'flows')], { cwd: root });
    child.stdout.destroy(); // the reader is gone before the first write
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(err).not.toMatch(/EPIPE|Error|at /);
    expect(code).toBe(0);
  });
});

describe('README.md shows real output', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it('of validate, for its flow with prompt misspelt', async () => {
    const flowYaml = /## A flow\n\n```yaml\n([\s\S]*?)```/.exec(readme)![1]!;
    const shown = /misspelt `promt:`, it prints:\n\n```\n([\s\S]*?)```/.exec(readme)![1]!;
    const d = join(mkdtempSync(join(tmpdir(), 'callscript-readme-')), 'flows');
    mkdirSync(d);
    for (const f of readdirSync(join(root, 'flows')).filter((n) => n.includes('.')))
      copyFileSync(join(root, 'flows', f), join(d, f));
    expect(flowYaml).toContain('      prompt: [');
    writeFileSync(join(d, 'hello.yaml'), flowYaml.replace('      prompt: [', '      promt: ['));
    const c = capture();
    expect(await validate([`${d}/`], c.out)).toBe(1);
    expect(c.text().split(`${d}/`).join('flows/')).toBe(shown);
  });

  it('of the quick start curl: the first answer of front-desk', async () => {
    const body = /curl -s localhost:3000\/rt\/front-desk -H 'content-type: application\/json' -d '([\s\S]*?)'\n/.exec(
      readme,
    )![1]!;
    const shown = /greets in French before its English menu:\n\n```json\n(.*)\n```/.exec(readme)![1]!;
    const child = spawn(
      process.execPath,
      [...CLI, 'serve', '--port', '0', '--flows', join(root, 'flows'), '--log-level', 'warn'],
      { cwd: root },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (x) => {
          out += x;
          const m = /on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
          if (m && out.includes('health:')) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const res = await fetch(`${url}/rt/front-desk`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(await res.text()).toBe(shown);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('callscript errors', () => {
  it('explains one code and refuses unknown ones', () => {
    const c = capture();
    expect(errors('unknown_key', {}, c.out)).toBe(0);
    expect(c.text()).toMatch(/^UNKNOWN_KEY \(error\)\n {2}.+\n {2}hint: /);
    expect(errors('NOPE', {}, capture().out)).toBe(1);
  });
});

describe('callscript serve (a real process)', () => {
  it(
    'a flows directory that does not exist: its diagnostic and exit 2 (the watcher did not get to throw ENOENT ' +
      'first)',
    async () => {
      const missing = join(mkdtempSync(join(tmpdir(), 'callscript-noflows-')), 'flows');
      const child = spawn(
        process.execPath,
        [...CLI, 'serve', '--port', '0', '--flows', missing, '--log-level', 'silent'],
        { cwd: root },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      const code = await new Promise((r) => child.on('exit', r));
      expect(code).toBe(2);
      expect(err).toBe(
        `${missing}:1:1 error FLOWS_DIR_MISSING cannot read the flows directory ${missing}: ENOENT\nhint: ` +
          `Create it, or point FLOWS_DIR / --flows / server.flows_dir at the folder holding your *.yaml flows.\n`,
      );
      expect(out).toBe('');
    },
  );

  it('prints the URL and the flows it loaded, and answers on it', async () => {
    const child = spawn(
      process.execPath,
      [...CLI, 'serve', '--port', '0', '--flows', join(root, 'test/fixtures/http-flows'), '--log-level', 'warn'],
      { cwd: root },
    );
    let out = '';
    let err = '';
    try {
      const url = await new Promise<string>((resolve, reject) => {
        // stdout and stderr arrive in either order: wait for the URL and the refused flow's diagnostic
        const ready = () => {
          const m = /on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
          if (m && out.includes('health:') && err.includes('broken.yaml')) resolve(m[1]!);
        };
        child.stderr.on('data', (d) => {
          err += d;
          ready();
        });
        child.stdout.on('data', (d) => {
          out += d;
          ready();
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      expect(out).toMatch(/callscript serving 2 flows from .*http-flows on http:\/\/127\.0\.0\.1:\d+\n/);
      expect(out).toMatch(/ {2}POST http:\/\/127\.0\.0\.1:\d+\/rt\/desk {2}\(desk\.yaml, version [0-9a-f]{12}\)\n/);
      expect(out).toContain('refused (errors above):');
      expect(err).toContain('broken.yaml:2:8 error UNKNOWN_STEP');
      const res = await fetch(`${url}/health`);
      expect(res.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('callscript serve: secrets', () => {
  const serveFlows = (env: NodeJS.ProcessEnv) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [...CLI, 'serve', '--port', '0', '--flows', join(root, 'flows'), '--log-level', 'warn'],
        { cwd: root, env },
      );
      let out = '';
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.stdout.on('data', (d) => {
        out += d;
        // the last line of its start output (the warnings are written before it): stopped, by its handler or not
        if (out.includes('  watching ')) child.kill('SIGTERM');
      });
      // 'close': once its output is read to the end (at 'exit' some may still be in the pipe)
      child.on('close', () => (out.includes('  watching ') ? resolve(err) : reject(new Error(err))));
    });

  it('warns at start about a declared secret the environment does not give, and only then', async () => {
    const { BANK_API_TOKEN: _, ...env } = process.env;
    const [without, given] = await Promise.all([serveFlows(env), serveFlows({ ...env, BANK_API_TOKEN: 'token' })]);
    expect(without).toContain(
      'callscript serve: warning: bank-line declares the secret BANK_API_TOKEN, which is not set in the ' +
        'environment: their http steps send it empty (set BANK_API_TOKEN where the server runs)\n',
    );
    expect(given).not.toContain('BANK_API_TOKEN');
  });
});

describe('callscript schema --write', () => {
  it('creates the directory it writes into (outside the repository)', async () => {
    const d = join(mkdtempSync(join(tmpdir(), 'callscript-schema-')), 'nested', 'schemas');
    const c = capture();
    expect(await schema({ write: true, dir: d }, c.out)).toBe(0);
    expect(JSON.parse(readFileSync(join(d, 'flow.schema.json'), 'utf8'))).toHaveProperty('$schema');
    expect(JSON.parse(readFileSync(join(d, 'config.schema.json'), 'utf8'))).toHaveProperty('$schema');
    expect(c.text()).toBe(`wrote ${d}/flow.schema.json and ${d}/config.schema.json\n`);
  });
});

/**
 * A flow file that is a symbolic link out of its directory is never read: a contribution
 * carrying a link to callscript.yaml or /etc/passwd would otherwise have its target
 * printed in code frames, logs and the open /health. Links inside the directory (a
 * Kubernetes ConfigMap mount) are followed. A FIFO named *.yaml is never opened for a
 * blocking read (it would hang validate, the server's start and its reloads).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Registry } from '../../src/registry/registry.js';
import { readStableFlows } from '../../src/registry/load.js';
import { loadFlowDir, runScenarioFile } from '../../src/testing/index.js';
import { loadFlow } from '../../src/cli/paths.js';
import { validate } from '../../src/cli/validate.js';

const SECRET = 'admin:\n  login: boss\n  password: S3cretAdminPw\n';

function project(): { dir: string; flows: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cs-link-'));
  const flows = join(dir, 'flows');
  mkdirSync(flows);
  writeFileSync(join(dir, 'callscript.yaml'), SECRET);
  writeFileSync(join(flows, 'ok.yaml'), 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n');
  symlinkSync(join(dir, 'callscript.yaml'), join(flows, 'evil.yaml'));
  return { dir, flows };
}

describe('symbolic links among flow files', () => {
  it('validate refuses the link without reading it: UNREADABLE_FILE, the target never printed', async () => {
    const { flows } = project();
    let out = '';
    const sink = new Writable({ write: (c, _e, cb) => ((out += String(c)), cb()) });
    expect(await validate([flows], sink)).toBe(1);
    expect(out).toContain('evil.yaml');
    expect(out).toContain('UNREADABLE_FILE');
    expect(out).toContain('it is a symbolic link to a file outside the flows directory');
    expect(out).not.toContain('S3cretAdminPw');
    expect(out).not.toContain('password');
  });

  it('the server loads the regular flows, reports the link, and reloads leave it out', async () => {
    const { flows } = project();
    const { registry, report } = await Registry.fromDirectory(flows);
    expect(registry.list().map((f) => f.name)).toEqual(['ok']);
    expect(report.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
      `UNREADABLE_FILE ${join(flows, 'evil.yaml')} is not read: it is a symbolic link to a file outside the ` +
        `flows directory (a link could show another file in diagnostics)`,
    ]);
    expect(JSON.stringify(report)).not.toContain('S3cret');
    const texts = await readStableFlows(flows, 0);
    expect(texts?.map((t) => t.file)).toEqual([join(flows, 'ok.yaml')]);
  });

  it('a link to a file inside the directory is followed (a ConfigMap mount: x.yaml -> ..data/x.yaml)', async () => {
    const { flows } = project();
    mkdirSync(join(flows, '..2026_11_25'));
    writeFileSync(join(flows, '..2026_11_25', 'mounted.yaml'), 'version: 1\nstart: a\nsteps:\n  a: { hangup: {} }\n');
    symlinkSync('..2026_11_25', join(flows, '..data'));
    symlinkSync(join('..data', 'mounted.yaml'), join(flows, 'mounted.yaml'));
    const { registry, report } = await Registry.fromDirectory(flows);
    expect(
      registry
        .list()
        .map((f) => f.name)
        .sort(),
    ).toEqual(['mounted', 'ok']);
    expect(report.diagnostics.map((d) => d.file)).toEqual([join(flows, 'evil.yaml')]);
    // a link whose last hop leaves the directory is refused however many hops it takes
    symlinkSync(join('..data', 'evil.yaml'), join(flows, 'twice.yaml'));
    symlinkSync(join(flows, '..', 'callscript.yaml'), join(flows, '..2026_11_25', 'evil.yaml'));
    const again = await Registry.fromDirectory(flows);
    expect(again.report.diagnostics.map((d) => d.file).sort()).toEqual([
      join(flows, 'evil.yaml'),
      join(flows, 'twice.yaml'),
    ]);
    expect(JSON.stringify(again.report)).not.toContain('S3cret');
  });
});

describe('a FIFO named *.yaml among flow files', () => {
  function withFifo(): { dir: string; flows: string } {
    const p = project();
    execFileSync('mkfifo', [join(p.flows, 'pipe.yaml')]);
    return p;
  }
  const WHY = 'it is not a regular file (a FIFO, a device or a socket): flow files must be regular files';

  it('validate reports it without opening it for a blocking read', async () => {
    const { flows } = withFifo();
    let out = '';
    const sink = new Writable({ write: (c, _e, cb) => ((out += String(c)), cb()) });
    expect(await validate([flows], sink)).toBe(1);
    expect(out).toContain(`UNREADABLE_FILE`);
    expect(out).toContain(`cannot read ${join(flows, 'pipe.yaml')}: ${WHY}`);
    // the explicit path too
    out = '';
    expect(await validate([join(flows, 'pipe.yaml')], sink)).toBe(1);
    expect(out).toContain(WHY);
  });

  it('the server starts without it, reloads leave it out, test and paths read the others', async () => {
    const { flows } = withFifo();
    const { registry, report } = await Registry.fromDirectory(flows);
    expect(registry.list().map((f) => f.name)).toEqual(['ok']);
    expect(report.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
      `UNREADABLE_FILE ${join(flows, 'evil.yaml')} is not read: it is a symbolic link to a file outside the ` +
        `flows directory (a link could show another file in diagnostics)`,
      `UNREADABLE_FILE ${join(flows, 'pipe.yaml')} is not read: ${WHY}`,
    ]);
    expect((await readStableFlows(flows, 0))?.map((t) => t.file)).toEqual([join(flows, 'ok.yaml')]);
    const set = await loadFlowDir(flows);
    expect([...set.byName.keys()]).toEqual(['ok']);
    expect(set.problems).toContain(`${join(flows, 'pipe.yaml')}: not read: ${WHY}`);
    expect((await loadFlow('ok', flows)).name).toBe('ok');
    await expect(loadFlow(join(flows, 'pipe.yaml'), flows)).rejects.toThrow('not a regular file');
    // a scenario named pipe: refused, not hung
    execFileSync('mkfifo', [join(flows, 'pipe.test.yaml')]);
    const run = await runScenarioFile(join(flows, 'pipe.test.yaml'), set);
    expect(run.errors.map((e) => e.message)).toEqual([`cannot read the file: ${WHY}`]);
  });
});

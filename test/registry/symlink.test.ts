/**
 * A flow file that is a symbolic link is never read (O_NOFOLLOW): a contribution carrying
 * a link to callscript.yaml or /etc/passwd would otherwise have its target printed in
 * code frames, logs and the open /health.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Registry } from '../../src/registry/registry.js';
import { readStableFlows } from '../../src/registry/load.js';
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
    expect(out).toContain('it is a symbolic link: flow files must be regular files');
    expect(out).not.toContain('S3cretAdminPw');
    expect(out).not.toContain('password');
  });

  it('the server loads the regular flows, reports the link, and reloads leave it out', async () => {
    const { flows } = project();
    const { registry, report } = await Registry.fromDirectory(flows);
    expect(registry.list().map((f) => f.name)).toEqual(['ok']);
    expect(report.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([`UNREADABLE_FILE ${join(flows, 'evil.yaml')} is not read: it is a symbolic link: flow files must be regular files (a link could show another file in diagnostics)`]);
    expect(JSON.stringify(report)).not.toContain('S3cret');
    const texts = await readStableFlows(flows, 0);
    expect(texts?.map((t) => t.file)).toEqual([join(flows, 'ok.yaml')]);
  });
});

/**
 * The `date` filter with cached name formatters (src/flow/dates.ts) prints what liquid's own
 * `date` filter prints: same dates, formats, time zones (the server's and the filter's
 * argument) and locales, compared one by one.
 */
import { Liquid, filters } from 'liquidjs';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedDateFilter, DateNames, type DateFilter } from '../../src/flow/dates.js';
import { render, type Scope } from '../../src/flow/expr.js';

const two = (n: number) => String(n).padStart(2, '0');

const OPTIONS = {
  strictFilters: true,
  strictVariables: false,
  ownPropertyOnly: true,
  cache: false,
  preserveTimezones: true,
};

/** liquid as it comes, and liquid with the cached names, for one locale. */
function pair(locale?: string): { stock: Liquid; cached: Liquid; names: DateNames } {
  const stock = new Liquid({ ...OPTIONS, ...(locale ? { locale } : {}) });
  const cached = new Liquid({ ...OPTIONS, ...(locale ? { locale } : {}) });
  const names = new DateNames();
  cached.registerFilter('date', cachedDateFilter(names, filters.date as DateFilter) as never);
  return { stock, cached, names };
}

const DATES = [
  ...Array.from({ length: 12 }, (_, m) => `2025-${two(m + 1)}-${two(1 + ((m * 5) % 28))}T${two((m * 7) % 24)}:30:00Z`),
  '2024-02-29T23:59:59Z',
  '2025-06-12T10:30:00+02:00',
  '2025-06-12T00:30:00+02:00',
  '2025-12-31T23:30:00-05:30',
  '2025-03-30T01:30:00Z', // a DST change in Europe
  '2025-11-02T06:30:00Z', // a DST change in America
  '1582-10-10T12:00:00Z', // before the Gregorian reform (ICU's calendar switches to Julian)
  '0099-07-04T12:00:00Z',
  '1900-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '2025-06-12',
  'June 12, 2025 10:30',
  1_749_724_200,
  '1749724200',
  'not a date',
  '',
];

const FORMATS = [
  '%-d %B %Y',
  '%-d %B',
  '%A %-d %B at %-I:%M %p',
  '%A %-d %B',
  '%d/%m %H:%M',
  '%a %b %h %A %B',
  '%^A %#B %#a %^b %^#h',
  '%10a|%-10A|%_12B|%012h|%010b|%-B|%0A|%3a',
  '%EA %OB %Ea',
  '%%A %%B 100% done %A',
  '%A\n%B\n%',
  '%Y-%m-%d %H:%M:%S %z %Z',
  '%c | %x | %X',
  'no conversion',
  '',
];

const ZONES = ['UTC', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Chatham'];
const savedTz = process.env.TZ;
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

describe('cached names print what liquid prints', () => {
  const { stock, cached, names } = pair();
  it.each(ZONES)('server time zone %s: every date, format and filter time zone', (tz) => {
    process.env.TZ = tz;
    let compared = 0;
    for (const d of DATES) {
      for (const f of FORMATS) {
        for (const arg of ['', ', "America/New_York"', ', -60']) {
          const tpl = `{{ d | date: f${arg} }}`;
          expect(cached.parseAndRenderSync(tpl, { d, f }), `${tz} ${String(d)} ${JSON.stringify(f)}${arg}`).toBe(
            stock.parseAndRenderSync(tpl, { d, f }),
          );
          compared++;
        }
      }
      // no format: liquid's default dateFormat, which names the weekday and the month
      expect(cached.parseAndRenderSync('{{ d | date }}', { d })).toBe(
        stock.parseAndRenderSync('{{ d | date }}', { d }),
      );
      // a format that is not a string
      expect(cached.parseAndRenderSync('{{ d | date: 5 }}', { d })).toBe(
        stock.parseAndRenderSync('{{ d | date: 5 }}', { d }),
      );
    }
    expect(compared).toBe(DATES.length * FORMATS.length * 3);
    expect(names.size).toBeLessThanOrEqual(5);
  });

  it.each(['en-US', 'en-GB', 'fr-FR', 'de-DE', 'ja-JP', 'ar-EG', 'fa-IR', 'th-TH'])(
    'locale %s (calendars other than the Gregorian one too)',
    (locale) => {
      process.env.TZ = 'Europe/Paris';
      const p = pair(locale);
      for (const d of DATES) {
        for (const f of ['%A %-d %B %Y', '%a %b %h', '%^A %#B %12b']) {
          expect(p.cached.parseAndRenderSync('{{ d | date: f }}', { d, f }), `${locale} ${String(d)} ${f}`).toBe(
            p.stock.parseAndRenderSync('{{ d | date: f }}', { d, f }),
          );
        }
      }
    },
  );

  it('keeps the name formatters cache bounded', () => {
    const n = new DateNames(4);
    for (const locale of ['en-US', 'fr-FR', 'de-DE', 'es-ES'])
      for (const c of ['a', 'A', 'b', 'B'] as const) n.name(locale, c, 2025, 6, 12);
    expect(n.size).toBe(4);
    expect(n.name('en-US', 'A', 2025, 6, 12)).toBe('Thursday');
    expect(n.name('fr-FR', 'B', 2025, 6, 12)).toBe('juin');
  });

  it('falls back to liquid alone when the text holds the marker characters', () => {
    const f = '%A \u0001%Y\u0002%m\u0002%d\u0003';
    expect(cached.parseAndRenderSync('{{ d | date: f }}', { d: '2025-06-12T10:30:00Z', f })).toBe(
      stock.parseAndRenderSync('{{ d | date: f }}', { d: '2025-06-12T10:30:00Z', f }),
    );
  });
});

describe("the flows' date formats render as before", () => {
  const scope: Scope = {
    vars: { appointment: '2025-06-12T14:05:00', renewal: '2025-07-01' },
    call: {},
    result: '',
    error: '',
  };
  it.each([
    ["{{ vars.renewal | date: '%-d %B %Y' }}", '1 July 2025'],
    ["{{ vars.renewal | date: '%-d %B' }}", '1 July'],
    ["{{ vars.appointment | date: '%A %-d %B at %-I:%M %p' }}", 'Thursday 12 June at 2:05 PM'],
    ["{{ vars.appointment | date: '%A %-d %B' }}", 'Thursday 12 June'],
    ["{{ vars.appointment | date: '%d/%m %H:%M' }}", '12/06 14:05'],
  ])('%s', (tpl, want) => {
    for (const tz of ['UTC', 'America/Los_Angeles', 'Asia/Kolkata']) {
      process.env.TZ = tz;
      expect(render(tpl, scope)).toBe(want);
    }
  });
});

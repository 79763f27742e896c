import { describe, expect, it } from 'vitest';
import { checkListArgs, checkSendArgs, checkSmsOptions, toSmsDatetime } from '../../src/sms/index.js';

describe('SMS argument checks (shared with the emulator)', () => {
  it('accept valid arguments', () => {
    expect(checkSendArgs({ from: '', to: '+33639980042', body: 'x', options: null })).toBeNull();
    expect(checkSendArgs({ from: 'SMS', to: '+14155552671', body: 'x' })).toBeNull();
    expect(checkSendArgs({ from: 'My-Shop_1 a', to: '+33639980042', body: 'x' })).toBeNull();
    expect(
      checkSmsOptions({
        force_encoding: 'UNICODE',
        nature: 'MARKETING',
        user_data: 'é'.repeat(32),
        flash_message: false,
        webhook: { endpoint: 'http://127.0.0.1/h' },
      }),
    ).toBeNull();
    expect(checkListArgs({ type: 'OUT', from: '2024-02-29 00:00:00', to: '2024-12-31 23:59:59' })).toBeNull();
  });

  it('refuse values of the wrong type, as JSON or a query string may carry them', () => {
    expect(checkSendArgs({ to: '+33639980042', body: 'x' })).toEqual({
      param: 'from',
      message: 'from: a string is required ("" for a shared short code)',
    });
    expect(checkSendArgs({ from: '', to: 33639980042, body: 'x' })).toEqual({
      param: 'to',
      message: 'to: a string is required',
    });
    expect(checkSendArgs({ from: '', to: '+33639980042', body: null })).toEqual({
      param: 'body',
      message: 'body: a string is required',
    });
    expect(checkSmsOptions([])).toEqual({ param: 'options', message: 'options: an object or null' });
    expect(checkSmsOptions({ webhook: 'https://x' })).toEqual({
      param: 'options.webhook',
      message: 'options.webhook: an object {endpoint: "<http(s) URL>"}',
    });
    expect(checkSmsOptions({ webhook: { endpoint: 'not a url' } })).toEqual({
      param: 'options.webhook.endpoint',
      message: 'options.webhook.endpoint: not a URL (e.g. https://example.com/sms-status)',
    });
    expect(checkListArgs({ type: 'IN', from: '2024-01-01 00:00:00' })).toEqual({
      param: 'to',
      message: 'to: a datetime is required (YYYY-MM-DD HH:MM:SS, UTC)',
    });
  });

  it('checks the first problem in order: from, to, body, options', () => {
    expect(checkSendArgs({ from: '123', to: 'x', body: '' })?.param).toBe('from');
    expect(checkSendArgs({ from: '', to: 'x', body: '' })?.param).toBe('to');
  });

  it('toSmsDatetime is UTC without milliseconds', () => {
    expect(toSmsDatetime(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 999)))).toBe('2024-01-02 03:04:05');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import { hello, secret, sleep, startProxyFixture, type ProxyFixture } from '../../gateway/test-fixture';
import { sendMail } from './mailer';

/**
 * Mail alerts end to end: a gateway in front of the mock upstream, the Owner's mail settings
 * stored through /x-config, and a real SMTP server started here that requires the login and
 * reads every message back. Each alert kind must arrive exactly once per period.
 */

interface Received { from: string; to: string[]; subject: string; text: string; user: string | undefined }

const USER = 'alerts@mail.example.test';
const PASS = 'smtp-pass-that-must-never-leak-0123';
const OWNER_MAIL = 'owner@example.test';
const METERED = JSON.stringify({ ChatPricing: { metered: { InputText: 0, OutputText: 10_000 } } });

let smtp: SMTPServer;
let smtpPort: number;
const inbox: Received[] = [];
let f: ProxyFixture;

function startSmtp(): Promise<number> {
  smtp = new SMTPServer({
    // Plain SMTP on loopback with a login, as a relay inside a private network is often run.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === USER && auth.password === PASS) return cb(null, { user: auth.username });
      return cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      simpleParser(stream).then((m) => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address).sort(),
          subject: m.subject ?? '',
          text: m.text ?? '',
          user: session.user as string | undefined,
        });
        cb();
      }, cb);
    },
  });
  return new Promise((resolve) => smtp.listen(0, '127.0.0.1', () => resolve((smtp.server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  smtpPort = await startSmtp();
  f = await startProxyFixture({
    userMinBalance: 0,
    // Small cool-downs so "out of rotation for long" (KEY_OPEN_MAX_MS) is reached within the test.
    keyOpenMs: 100,
    keyOpenMaxMs: 200,
    switchOverThreshold: 2,
    switchOverWindowMs: 60_000,
  });
  await f.config({ PRICING: METERED, EMAIL_SMTP: '127.0.0.1', EMAIL_PORT: String(smtpPort), EMAIL_AUTH: USER, EMAIL_PASS: PASS, XAI_MAIL: OWNER_MAIL });
}, 60_000);

afterAll(async () => {
  await f?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

const settled = async () => {
  await f.gw.gateway.alerts.settled();
  await f.gw.gateway.proxy.health.settle();
  await f.gw.gateway.alertMail.settled();
};
const withSubject = (s: string) => inbox.filter((m) => m.subject === s);
const chat = (key: string, model = 'gpt-4o', extra: Record<string, unknown> = {}) =>
  f.gw.as(key).post('/v1/chat/completions', { model, messages: hello, ...extra });

describe('mail alerts', () => {
  it('SoftLimit and low balance: once per period each, to the account (BillingEmail, else Email) and the Owner', async () => {
    const billed = await f.account({ credit: 21, level: 7, softLimit: 2, billingEmail: 'billing@example.test' });
    const plain = await f.account({ credit: 21, level: 7 });
    const money = secret('money');
    await f.addKey(7, money);
    // 50 completion tokens at 10,000 USD per million: 0.5 a call.
    f.mock.behave(money, { usage: { prompt_tokens: 0, completion_tokens: 50 } });
    // USER_API_BALANCE (20) is the low-balance line: 21 of credit goes below it after 3 calls of 0.5.
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => chat(billed.key, 'metered', { max_tokens: 50 })),
      ...Array.from({ length: 6 }, () => chat(plain.key, 'metered', { max_tokens: 50 })),
    ]);
    expect(answers.map((r) => r.status).every((s) => s === 200)).toBe(true);
    await settled();
    // More calls in the same period mail nothing more.
    for (let i = 0; i < 3; i++) expect((await chat(billed.key, 'metered', { max_tokens: 50 })).status).toBe(200);
    await settled();

    const soft = withSubject(`SoftLimit reached: ${billed.name} (#${billed.id})`);
    expect(soft).toHaveLength(1);
    expect(soft[0].to).toEqual(['billing@example.test', OWNER_MAIL]);
    expect(soft[0].from).toBe(OWNER_MAIL);
    expect(soft[0].user).toBe(USER);
    expect(soft[0].text).toContain('SoftLimit of $2.00');
    const low = withSubject(`Balance low: ${billed.name} (#${billed.id})`);
    expect(low).toHaveLength(1);
    expect(low[0].to).toEqual(['billing@example.test', OWNER_MAIL]);
    expect(low[0].text).toContain('below $20.00');
    // Without a BillingEmail the account's Email gets it.
    const plainLow = withSubject(`Balance low: ${plain.name} (#${plain.id})`);
    expect(plainLow).toHaveLength(1);
    expect(plainLow[0].to).toEqual([plain.email, OWNER_MAIL].sort());
    expect(withSubject(`SoftLimit reached: ${plain.name} (#${plain.id})`)).toHaveLength(0);

    // A grant starts a new low-balance period: one more mail, no more.
    expect((await f.gw.root.put(`/x-users/${billed.id}`, { CreditGranted: 1 })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await chat(billed.key, 'metered', { max_tokens: 50 })).status).toBe(200);
    await settled();
    expect(withSubject(`Balance low: ${billed.name} (#${billed.id})`)).toHaveLength(2);
    expect(withSubject(`SoftLimit reached: ${billed.name} (#${billed.id})`)).toHaveLength(1);
  });

  it('a provider key disabled after a 401: once a day per key, to the Owner, even when disabled again', async () => {
    const s = secret('refused');
    const keyId = await f.addKey(2, s, { name: 'refused-key' });
    f.mock.behave(s, { status: 401 });
    const user = await f.account({ credit: 50, level: 2 });
    expect((await chat(user.key)).status).toBeGreaterThanOrEqual(400);
    await settled();
    // Enabled by hand and refused again the same day: no second mail.
    expect((await f.gw.root.put(`/x-keys/${keyId}`, { Status: true })).status).toBe(200);
    expect((await chat(user.key)).status).toBeGreaterThanOrEqual(400);
    await settled();
    const mails = withSubject('Provider key disabled: refused-key');
    expect(mails).toHaveLength(1);
    expect(mails[0].to).toEqual([OWNER_MAIL]);
    expect(mails[0].text).toContain(`(#${keyId}, Level 2)`);
    expect(mails[0].text).toContain('upstream answered 401');
    expect(mails[0].text).not.toContain(s);
    expect(mails[0].text).not.toContain(f.mock.url);
  });

  it('a key out of rotation for long and its Level switched over: once a day each', async () => {
    const s = secret('failing');
    const keyId = await f.addKey(3, s, { name: 'failing-key' });
    f.mock.behave(s, { status: 503 });
    const user = await f.account({ credit: 50, level: 3 });
    // Three failures open the circuit; each probe after a cool-down fails and reopens it, until
    // it has been out of rotation for KEY_OPEN_MAX_MS (200 ms here), and on for a while.
    const until = Date.now() + 2_500;
    while (Date.now() < until) {
      expect((await chat(user.key)).status).toBeGreaterThanOrEqual(500);
      await sleep(40);
    }
    await settled();
    const open = withSubject('Provider key out of rotation: failing-key');
    expect(open).toHaveLength(1);
    expect(open[0].to).toEqual([OWNER_MAIL]);
    expect(open[0].text).toContain(`(#${keyId}, Level 3) for the model gpt-4o has been out of rotation`);
    expect(open[0].text).not.toContain(f.mock.url);
    const switched = withSubject('Level 3 switched over');
    expect(switched).toHaveLength(1);
    expect(switched[0].to).toEqual([OWNER_MAIL]);
    // No other Level's traffic failed.
    expect(inbox.filter((m) => /^Level \d+ switched over$/.test(m.subject)).map((m) => m.subject)).toEqual(['Level 3 switched over']);
  });

  it('keeps the password out of every log line; one alert_mail_sent line per mail', async () => {
    expect(f.gw.logs.some((l) => l.includes(PASS))).toBe(false);
    expect(f.gw.logs.filter((l) => l.includes('"alert_mail_sent"')).length).toBe(inbox.length);
  });
});

describe('test mail', () => {
  it('POST /x-config/test-mail sends through the stored settings; a wrong password is a 400 naming the settings, never the secret', async () => {
    const before = inbox.length;
    const r = await f.gw.root.post('/x-config/test-mail', {});
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, to: [OWNER_MAIL], accepted: [OWNER_MAIL] });
    const other = await f.gw.root.post('/x-config/test-mail', { To: 'someone@example.test' });
    expect(other.body.accepted).toEqual(['someone@example.test']);
    expect(inbox.slice(before).map((m) => [m.subject, m.to])).toEqual([
      ['Switchyard test mail', [OWNER_MAIL]], ['Switchyard test mail', ['someone@example.test']],
    ]);
    expect((await f.gw.root.post('/x-config/test-mail', { To: 'not an address' })).status).toBe(400);

    await f.config({ EMAIL_PASS: 'wrong-password-0123' });
    const refused = await f.gw.root.post('/x-config/test-mail', {});
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('mail_auth_refused');
    expect(refused.body.error.message).toContain('EMAIL_AUTH and EMAIL_PASS');
    expect(refused.text).not.toContain('wrong-password-0123');
    expect(refused.text).not.toContain('127.0.0.1');

    await f.config({ EMAIL_PASS: PASS, EMAIL_PORT: '1' });
    const away = await f.gw.root.post('/x-config/test-mail', {});
    expect(away.status).toBe(400);
    expect(away.body.error.code).toBe('mail_unreachable');

    await f.config({ EMAIL_SMTP: '', EMAIL_PORT: String(smtpPort) });
    const none = await f.gw.root.post('/x-config/test-mail', {});
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('mail_not_configured');
    expect(f.gw.logs.some((l) => l.includes(PASS) || l.includes('wrong-password-0123'))).toBe(false);
  });

  it('sendMail talks to the server directly: accepted recipients come back', async () => {
    const r = await sendMail({ host: '127.0.0.1', port: smtpPort, user: USER, pass: PASS, from: OWNER_MAIL }, { to: ['direct@example.test'], subject: 'direct', text: 'hi' });
    expect(r.accepted).toEqual(['direct@example.test']);
  });
});

import nodemailer from 'nodemailer';

/** An Owner's outgoing mail server (EMAIL_SMTP, EMAIL_PORT, EMAIL_AUTH, EMAIL_PASS) and sender. */
export interface MailServer {
  host: string;
  port: number;
  /** The login (EMAIL_AUTH); none: the server is used without authentication. */
  user: string | null;
  pass: string | null;
  from: string;
}

export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
}

/** What a send that failed tells its caller: a code and a sentence without host, login or password. */
export class MailError extends Error {
  constructor(readonly code: 'mail_unreachable' | 'mail_auth_refused' | 'mail_rejected' | 'mail_failed', message: string, readonly transient: boolean) {
    super(message);
  }
}

/** The default submission port; 465 means TLS from the first byte, any other STARTTLS when offered. */
export const DEFAULT_SMTP_PORT = 587;

/** How long each step of the conversation (connect, greeting, any reply) may take. */
export const MAIL_TIMEOUT_MS = 15_000;

/**
 * Sends one message through the Owner's server. A transport per message: alerts are rare, and
 * the settings may have changed since the last one. Errors are turned into a MailError whose
 * text names the setting to check, never the server's address, the login or the password.
 * `signal` gives the send up at once, wherever the conversation is (shutdown).
 */
export async function sendMail(server: MailServer, message: MailMessage, signal?: AbortSignal): Promise<{ accepted: string[] }> {
  const transport = nodemailer.createTransport({
    host: server.host,
    port: server.port,
    secure: server.port === 465,
    auth: server.user ? { user: server.user, pass: server.pass ?? '' } : undefined,
    connectionTimeout: MAIL_TIMEOUT_MS,
    greetingTimeout: MAIL_TIMEOUT_MS,
    socketTimeout: MAIL_TIMEOUT_MS,
    // Nothing of the conversation reaches a log: the login and password travel in it.
    logger: false,
    debug: false,
  });
  try {
    const info = await transport.sendMail({ from: server.from, to: message.to, subject: message.subject, text: message.text, signal });
    return { accepted: (info.accepted ?? []).map(String) };
  } catch (err) {
    throw mailError(err);
  } finally {
    transport.close();
  }
}

function mailError(err: unknown): MailError {
  const e = err as { code?: string; responseCode?: number };
  const status = typeof e.responseCode === 'number' ? ` (SMTP ${e.responseCode})` : '';
  switch (e.code) {
    case 'EABORT':
      return new MailError('mail_failed', 'Sending the mail was given up', false);
    case 'EAUTH':
      return new MailError('mail_auth_refused', `The mail server refused the login${status}: check EMAIL_AUTH and EMAIL_PASS`, false);
    case 'ECONNECTION':
    case 'ETIMEDOUT':
    case 'ESOCKET':
    case 'EDNS':
    case 'ETLS':
    case 'EGREETING':
      return new MailError('mail_unreachable', `The mail server could not be reached or did not answer${status}: check EMAIL_SMTP and EMAIL_PORT`, true);
    case 'EENVELOPE':
      return new MailError('mail_rejected', `The mail server refused the sender or the recipients${status}`, false);
    case 'EMESSAGE':
      return new MailError('mail_rejected', `The mail server refused the message${status}`, (e.responseCode ?? 0) < 500);
    default:
      return new MailError('mail_failed', `Sending the mail failed${status}`, (e.responseCode ?? 0) < 500);
  }
}

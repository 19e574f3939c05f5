/**
 * One JSON object per line. Callers pass facts, never secrets: keys, SecretKeys and
 * EMAIL_PASS are not handed to the logger at all (tests grep the output to prove it).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogSink = (line: string) => void;

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(sink: LogSink = (l) => process.stdout.write(l + '\n'), minLevel: LogLevel = (process.env.LOG_LEVEL as LogLevel) || 'info'): Logger {
  const min = order[minLevel] ?? order.info;
  const emit = (level: LogLevel) => (event: string, fields?: Record<string, unknown>) => {
    if (order[level] < min) return;
    const line: Record<string, unknown> = { time: new Date().toISOString(), level, event };
    // A field named like the line's own time, severity or event (a provider key's Level, say)
    // must never pass for them: it is kept beside them as field_<name>.
    if (fields) for (const k in fields) line[k === 'time' || k === 'level' || k === 'event' ? `field_${k}` : k] = fields[k];
    sink(JSON.stringify(line));
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export function errorFields(err: unknown): Record<string, unknown> {
  return err instanceof Error ? { error: err.message, stack: err.stack } : { error: String(err) };
}

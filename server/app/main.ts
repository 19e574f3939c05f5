import { readSettings, SettingsError } from '../core/settings';
import { startGateway, NativeUwsMissingError } from './gateway';
import { createLogger, errorFields } from '../core/log';
import { DataDirInUseError } from '../adapters/storage/data-dir-lock';

const log = createLogger();
/** Past SHUTDOWN_GRACE_MS: one database connect timeout (10 s) and the pool's close (5 s), with room. */
const HANG_MARGIN_MS = 20_000;

async function main() {
  const settings = readSettings();
  const gateway = await startGateway(settings, { log });
  const lines = [
    '',
    `  Switchyard is listening on ${gateway.url}`,
    `    AI proxy (OpenAI/Anthropic formats): ${gateway.url}/v1`,
    `    Console (any account's key):         ${gateway.url}/console/`,
    `    OpenAPI document:                    ${gateway.url}/openapi.json`,
    `    Database:                            ${settings.databaseUrl ? (settings.databaseUrl === 'memory://' ? 'throwaway PGlite (memory://, removed at exit)' : 'PostgreSQL') : `embedded PGlite in ${settings.dataDir}`}`,
  ];
  if (gateway.generatedRootKey) {
    lines.push('', '  Root API key (shown once; store it now, or set ROOT_KEY on first start):', `    ${gateway.generatedRootKey}`);
  }
  process.stdout.write(lines.join('\n') + '\n\n');

  let stopping = false;
  const stop = (signal: string) => {
    // A second signal changes nothing: `npm start` forwards the terminal's Ctrl-C to a node
    // that got it already, and the usage flush must not be cut short by it.
    if (stopping) return;
    stopping = true;
    log.info('shutdown', { signal, grace_ms: settings.shutdownGraceMs });
    // The grace bounds the drain and the usage flush; this only catches a close that hangs
    // past it (a database connection that neither answers nor fails).
    setTimeout(() => {
      log.error('shutdown_timed_out', { after_ms: settings.shutdownGraceMs + HANG_MARGIN_MS });
      process.exit(1);
    }, settings.shutdownGraceMs + HANG_MARGIN_MS).unref();
    gateway.close().then(() => process.exit(0), (err) => {
      log.error('shutdown_failed', errorFields(err));
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  if (err instanceof SettingsError || err instanceof NativeUwsMissingError || err instanceof DataDirInUseError) {
    process.stderr.write(`switchyard: ${err.message}\n`);
  } else {
    log.error('startup_failed', errorFields(err));
  }
  process.exit(1);
});

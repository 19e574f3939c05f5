import { readSettings, SettingsError } from '../core/settings';
import { startGateway, NativeUwsMissingError } from './gateway';
import { createLogger, errorFields } from '../core/log';

const log = createLogger();

async function main() {
  const settings = readSettings();
  const gateway = await startGateway(settings, { log });
  const lines = [
    '',
    `  Switchyard is listening on ${gateway.url}`,
    `    AI proxy (OpenAI/Anthropic formats): ${gateway.url}/v1`,
    `    Owner console:                       ${gateway.url}/console/`,
    `    OpenAPI document:                    ${gateway.url}/openapi.json`,
    `    Database:                            ${settings.databaseUrl ? (settings.databaseUrl === 'memory://' ? 'in-memory PGlite' : 'PostgreSQL') : `embedded PGlite in ${settings.dataDir}`}`,
  ];
  if (gateway.generatedRootKey) {
    lines.push('', '  Root API key (shown once; store it now, or set ROOT_KEY on first start):', `    ${gateway.generatedRootKey}`);
  }
  process.stdout.write(lines.join('\n') + '\n\n');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutdown', { signal });
    gateway.close().then(() => process.exit(0), (err) => {
      log.error('shutdown_failed', errorFields(err));
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  if (err instanceof SettingsError || err instanceof NativeUwsMissingError) {
    process.stderr.write(`switchyard: ${err.message}\n`);
  } else {
    log.error('startup_failed', errorFields(err));
  }
  process.exit(1);
});

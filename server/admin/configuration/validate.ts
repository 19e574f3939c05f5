import type { ConfigKey } from '../../../contract/config/schemas';
import { badRequest } from '../../../contract/errors';
import { MapperError, parseLevelMapper, parseModelFailover, parseModelMapper, parseSwitchOver } from '../../domain/mapping/mappers';
import { parseResourcePaths } from '../../domain/access/allow-lists';
import { parseModelLimitsJson } from '../../domain/mapping/model-limits';
import { parsePricing } from '../../domain/pricing/overrides';
import { parseUnpricedPolicy } from '../../domain/pricing/unpriced-policy';
import { parseOutputLimit } from '../../domain/pricing/estimate';
import { parseUnsupportedTools } from '../../domain/providers/unsupported-tools';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HOST = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

const validators: Record<ConfigKey, (v: string) => void> = {
  MODEL_MAPPER: (v) => parseModelMapper(v),
  MODEL_FAILOVER: (v) => parseModelFailover(v),
  LEVEL_MAPPER: (v) => parseLevelMapper(v),
  SWITCH_OVER: (v) => parseSwitchOver(v),
  RESOURCES: (v) => parseResourcePaths(v),
  MODEL_LIMITS: (v) => parseModelLimitsJson(v),
  PRICING: (v) => parsePricing(v),
  UNPRICED_MODEL_POLICY: (v) => parseUnpricedPolicy(v),
  DEFAULT_OUTPUT_LIMIT: (v) => parseOutputLimit(v),
  UNSUPPORTED_TOOLS: (v) => parseUnsupportedTools(v),
  XAI_MAIL: (v) => { if (!EMAIL.test(v)) throw new MapperError('XAI_MAIL: must be an email address'); },
  EMAIL_AUTH: (v) => { if (!EMAIL.test(v)) throw new MapperError('EMAIL_AUTH: must be an email address'); },
  EMAIL_SMTP: (v) => { if (!HOST.test(v)) throw new MapperError('EMAIL_SMTP: must be a host name or address'); },
  EMAIL_PORT: (v) => { if (!/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65535) throw new MapperError('EMAIL_PORT: must be a port from 1 to 65535'); },
  EMAIL_PASS: () => {},
};

/** Checks one `/x-config` value; an empty string means "remove" and is always valid. */
export function validateConfigValue(key: ConfigKey, value: string): void {
  if (value === '') return;
  try {
    validators[key](value);
  } catch (err) {
    if (err instanceof MapperError) throw badRequest(err.message, 'invalid_config_value');
    throw err;
  }
}

/** Same as validateConfigValue, for `/x-conf` fields that reuse the same formats. */
export function asBadRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof MapperError) throw badRequest(err.message, 'invalid_config_value');
    throw err;
  }
}

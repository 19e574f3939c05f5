import { t } from '../i18n';

const KINDS = ['standard', 'anthropic', 'azure', 'vertex', 'bedrock', 'gemini', 'unknown'] as const;

/** A provider key kind by its product's name; a kind this console does not know yet reads as the API names it. */
export const keyKindLabel = (kind: string): string => ((KINDS as readonly string[]).includes(kind) ? t(`latency.kinds.${kind as (typeof KINDS)[number]}`) : kind);

/**
 * The one line an instance logs when it learns it is not alone on its PostgreSQL database and
 * nothing shares the limits (no REDIS_URL), or null when there is nothing to say. Changes made
 * through the admin API still reach every instance (the change feed); these do not.
 */
export function perInstanceLimitsWarning(otherInstances: number, sharedLimits: boolean): string | null {
  if (sharedLimits || otherInstances <= 0) return null;
  const total = otherInstances + 1;
  return `${total} Switchyard instances use this database and REDIS_URL is not set: rate limits (RPM/TPM and the rest), credit reservations, spend caps (DailyLimit, HardLimit), sleeping keys and switch-over windows are kept per instance, so each instance may let through up to the full limit (about ${total}× across them). Set REDIS_URL on every instance to share them. Provider keys, configuration, accounts and credit changes reach every instance regardless.`;
}

import { createSignal } from 'solid-js';

/**
 * The Owner's API key lives only in this tab's sessionStorage: it survives a reload, is gone
 * when the page is closed, and is never written to localStorage or cookies.
 */
const STORAGE_KEY = 'switchyard.ownerKey';

function readStored(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage can be disabled (privacy modes); the session then lasts until a reload.
    return null;
  }
}

const [key, setKey] = createSignal<string | null>(readStored());
/** Why a session ends, shown on the sign-in screen in the language of the moment. */
export type EndReason = 'signedOut' | 'keyRefused';
const [endedBecause, setEndedBecause] = createSignal<EndReason | null>(null);

export const sessionKey = key;
export const sessionEndReason = endedBecause;

export function startSession(apiKey: string): void {
  try { sessionStorage.setItem(STORAGE_KEY, apiKey); } catch { /* kept in memory only */ }
  setEndedBecause(null);
  setKey(apiKey);
}

export function endSession(reason: EndReason | null = null): void {
  try { sessionStorage.removeItem(STORAGE_KEY); } catch { /* nothing stored */ }
  setEndedBecause(reason);
  setKey(null);
}

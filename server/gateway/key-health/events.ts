/**
 * What key health tells the rest of the process (mail alerts, later metrics): a provider key
 * disabled after an upstream 401/403, a key (or one model on it) opened again after its probe
 * failed — with how long it has been out of rotation — and an Owner's Level switched over.
 * The composition root subscribes; the gateway never learns who listens.
 */
export type KeyHealthEvent =
  | { type: 'key_disabled'; ownerId: number; keyId: number; level: number; reason: string; at: number }
  | {
    type: 'key_opened'; ownerId: number; keyId: number; level: number; model: string | null;
    /** Out of rotation without a close since (ms): 0 when it just left rotation. */
    outMs: number;
    reason: string; at: number;
  }
  | { type: 'level_switched'; ownerId: number; level: number; at: number };

export type KeyHealthListener = (event: KeyHealthEvent) => void;

export class KeyHealthEvents {
  private listeners: KeyHealthListener[] = [];

  /** Calls `listener` for every event; returns the unsubscribe function. */
  subscribe(listener: KeyHealthListener): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Tells every listener; a listener that throws never reaches the proxy's call. */
  emit(event: KeyHealthEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // Listeners log their own failures; the call that caused the event goes on.
      }
    }
  }
}

import type { Actor } from '../auth/caller';
import type { ConfigDeleteResult, ConfigKey, ConfigUpdate, ConfigUpdateResult, ConfigView, ConfUpdate, ConfUpdateResult, ConfView, TestMailRequest, TestMailResult } from './schemas';

export interface OwnerConfigService {
  view(actor: Actor): Promise<ConfView>;
  batch(actor: Actor, input: ConfUpdate): Promise<ConfUpdateResult>;
  get(actor: Actor): Promise<ConfigView>;
  put(actor: Actor, input: ConfigUpdate): Promise<ConfigUpdateResult>;
  remove(actor: Actor, keys: ConfigKey[]): Promise<ConfigDeleteResult>;
  testMail(actor: Actor, input: TestMailRequest): Promise<TestMailResult>;
}

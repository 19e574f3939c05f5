import type { Actor } from '../auth/caller';
import type { DecryptedText, EncryptedText, GeneratedKey } from './schemas';

export interface HelperService {
  generateKey(actor: Actor): Promise<GeneratedKey>;
  encrypt(actor: Actor, text: string): Promise<EncryptedText>;
  decrypt(actor: Actor, text: string): Promise<DecryptedText>;
}

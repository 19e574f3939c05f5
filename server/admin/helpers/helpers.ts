import type { HelperService } from '../../../contract/helpers/service';
import type { Actor } from '../../../contract/services';
import { badRequest } from '../../../contract/errors';
import { PURPOSE, generateAccountKey, type Vault } from '../../adapters/security/crypto';

/** `/x-gkey`, `/x-ekey`, `/x-dkey`. Encryption is scoped per Owner: one tenant cannot open another's text. */
export class Helpers implements HelperService {
  constructor(private readonly vault: Vault) {}

  async generateKey(_: Actor) {
    return { success: true as const, key: generateAccountKey() };
  }

  async encrypt({ caller }: Actor, text: string) {
    return { success: true as const, encrypted: this.vault.encrypt(PURPOSE.helper(caller.ownerId), text) };
  }

  async decrypt({ caller }: Actor, text: string) {
    const plain = this.vault.decrypt(PURPOSE.helper(caller.ownerId), text);
    if (plain === null) throw badRequest('text: not a value encrypted by /x-ekey for this Owner', 'invalid_ciphertext');
    return { success: true as const, decrypted: plain };
  }
}

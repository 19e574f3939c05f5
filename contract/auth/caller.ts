export type Role = 'root' | 'owner' | 'user';

/** The authenticated account making a request, as the server resolved it from its API key. */
export interface Caller {
  id: number;
  name: string;
  /** The tenant: ID of the Owner whose keys, configuration and pricing apply. */
  ownerId: number;
  /** DNA path, `.1.42.`: the IDs from Root down to and including this account. */
  dna: string;
  role: Role;
  isRoot: boolean;
  isOwner: boolean;
}

/** A caller plus where the request came from, for the operation log. */
export interface Actor {
  caller: Caller;
  ip: string;
}

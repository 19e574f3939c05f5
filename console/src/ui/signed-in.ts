import { createContext, useContext } from 'solid-js';
import type { UserInfo } from '../../../contract/dashboard/schemas';
import type { UserStatus } from '../../../contract/accounts/schemas';

/**
 * Who signed in, read once at sign-in (/dashboard/info and /dashboard/status in one batch): the
 * tabs take it from here instead of asking again on every visit. `status.manage` is as of
 * sign-in; the API still decides on every call.
 */
export interface SignedInAccount { info: UserInfo; status: UserStatus }

export const SignedInContext = createContext<SignedInAccount>();

/** The signed-in account; undefined outside the signed-in console. */
export const useSignedIn = () => useContext(SignedInContext);

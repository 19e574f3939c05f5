/**
 * bench:dashboard's client for "many accounts at once": every request carries the next of
 * the given account keys, so the gateway reads a different account each time (as thousands of
 * subaccounts opening their console would), never one account's warm cache. A process of its
 * own, as the autocannon CLI is for the other targets, so the gateway keeps its thread.
 *
 *   node --import tsx bench/many-keys-client.ts <url> <keys.json> <seconds> <connections>
 *
 * Prints autocannon's result as JSON.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const [url, keysFile, seconds, connections] = process.argv.slice(2);
const keys: string[] = JSON.parse(readFileSync(keysFile, 'utf8'));
let next = 0;
const result = await autocannon({
  url,
  connections: Number(connections),
  duration: Number(seconds),
  requests: [{
    setupRequest: (req) => {
      req.headers = { ...req.headers, authorization: `Bearer ${keys[next++ % keys.length]}` };
      return req;
    },
  }],
});
process.stdout.write(JSON.stringify(result));

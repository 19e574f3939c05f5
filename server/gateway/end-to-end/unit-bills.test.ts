import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFile } from 'openai';
import { fileBytes } from '../../testing/multipart';
import { AUDIO_BYTES_PER_SECOND } from '../../testing/mock-upstream/uploads';
import { keyedUser, startProxyFixture, type ProxyFixture } from '../test-fixture';

/**
 * The units of the routes billed by their own unit (images, seconds of audio, calls) read back
 * where usage is shown: the caller's bill, the descendant bill by every scope it reads
 * (the whole tree, a subtree, one account, an attribute filter), and the request log. Two
 * batches of one model on one day also prove the rollups add units up when a row is met again.
 */
let f: ProxyFixture;
beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0 });
}, 60_000);
afterAll(async () => { await f?.close(); });

const IMAGES = { images: 2 };
const AUDIO = { audio_seconds: 14, calls: 2 };

describe('units of unit-billed routes', () => {
  it('reach the bills and the request log', async () => {
    const team = await f.account();
    const { user, client, level } = await keyedUser(f, 'unit-bills', { parent: team });
    const images = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2, size: '1024x1024', quality: 'standard' });
    expect(images.data).toHaveLength(2);
    const audio = async (seconds: number) => client.audio.transcriptions.create({ file: await toFile(fileBytes(seconds * AUDIO_BYTES_PER_SECOND), 'talk.mp3', { type: 'audio/mpeg' }), model: 'whisper-1' });
    await audio(10);
    // Written in a batch of its own, so the day's whisper-1 rows are met again and summed.
    await f.gw.gateway.usage.flush();
    await audio(4);
    await f.gw.gateway.usage.flush();

    const own = (await f.gw.as(user.key).get('/dashboard/bill')).body;
    const day = own.daily_costs.find((d: any) => d.line_items.length > 0);
    expect(Object.fromEntries(day.line_items.map((i: any) => [i.name, i.usage.units]))).toEqual({ 'dall-e-3': IMAGES, 'whisper-1': AUDIO });
    expect(own.usage_summary['dall-e-3'].units).toEqual(IMAGES);
    expect(own.usage_summary['whisper-1'].units).toEqual(AUDIO);

    const scopes = ['/x-bill', `/x-bill?user=${team.dna}`, `/x-bill?user=${user.id}`, `/x-bill?user=L${level}`];
    for (const path of scopes) {
      const r = await f.gw.root.get(path);
      expect(r.status, path).toBe(200);
      expect(r.body.usage_summary['dall-e-3'].units, path).toEqual(IMAGES);
      expect(r.body.usage_summary['whisper-1'].units, path).toEqual(AUDIO);
      const items = r.body.daily_costs.flatMap((d: any) => d.line_items);
      expect(items.find((i: any) => i.name === 'whisper-1').usage.units, path).toEqual(AUDIO);
    }
    // The team's own bill of what is below it.
    expect((await f.gw.as(team.key).get('/x-bill')).body.usage_summary['whisper-1'].units).toEqual(AUDIO);

    const log = (await f.gw.as(user.key).get('/dashboard/requests')).body.data;
    expect(log.map((r: any) => [r.model, r.units])).toEqual([
      ['whisper-1', { audio_seconds: 4, calls: 1 }],
      ['whisper-1', { audio_seconds: 10, calls: 1 }],
      ['dall-e-3', IMAGES],
    ]);
  });

  it('leave a call billed by tokens alone without units', async () => {
    const { user, client } = await keyedUser(f, 'unit-bills-chat');
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await f.gw.gateway.usage.flush();
    const [row] = (await f.gw.as(user.key).get('/dashboard/requests')).body.data;
    expect(row.model).toBe('gpt-4o-mini');
    expect(row).not.toHaveProperty('units');
    const bill = (await f.gw.as(user.key).get('/dashboard/bill')).body;
    expect(bill.usage_summary['gpt-4o-mini']).not.toHaveProperty('units');
    expect(bill.daily_costs.flatMap((d: any) => d.line_items)[0].usage).not.toHaveProperty('units');
  });
});

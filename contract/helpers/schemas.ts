import { z } from 'zod';

export const GeneratedKey = z.object({ success: z.literal(true), key: z.string().meta({ description: '`sk-Xvs` followed by 45 letters and digits' }) }).meta({ id: 'GeneratedKey' });
export const EncryptedText = z.object({ success: z.literal(true), encrypted: z.string() }).meta({ id: 'EncryptedText' });
export const DecryptedText = z.object({ success: z.literal(true), decrypted: z.string() }).meta({ id: 'DecryptedText' });
export const TextPath = z.object({ text: z.string().min(1).max(4096) });
export type GeneratedKey = z.infer<typeof GeneratedKey>;
export type EncryptedText = z.infer<typeof EncryptedText>;
export type DecryptedText = z.infer<typeof DecryptedText>;

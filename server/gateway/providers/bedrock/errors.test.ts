import { describe, expect, it } from 'vitest';
import { bedrockError } from './errors';
import { scrubText } from '../../dispatch/scrub';

const aws = (name: string, message: string) => [Buffer.from(JSON.stringify({ message })), { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` }] as const;
const read = (r: { status: number; body: Buffer }) => ({ status: r.status, body: JSON.parse(r.body.toString()) });

describe('bedrockError', () => {
  it('reads ThrottlingException as a 429 and ValidationException as a 400, in Anthropic\'s shape', () => {
    expect(read(bedrockError(429, ...aws('ThrottlingException', 'Too many requests')))).toEqual({ status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'ThrottlingException: Too many requests' } } });
    expect(read(bedrockError(400, ...aws('ValidationException', 'max_tokens: bad')))).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error' } } });
  });

  it('makes every refused credential the key\'s 403, in its own words', () => {
    for (const [name, status] of [['ExpiredTokenException', 400], ['InvalidSignatureException', 403], ['UnrecognizedClientException', 403], ['AccessDeniedException', 403]] as const) {
      const r = read(bedrockError(status, ...aws(name, 'The Canonical String for this request should have been POST /model/x host:bedrock-runtime.us-east-1.amazonaws.com')));
      expect(r.status).toBe(403);
      expect(r.body.error.message).toBe(`AWS refused the key's credentials (${name})`);
    }
  });

  it('names the error from the body\'s __type when the header is missing', () => {
    const r = read(bedrockError(400, Buffer.from(JSON.stringify({ __type: 'com.amazon.coral.service#ExpiredTokenException', message: 'expired' })), {}));
    expect(r.status).toBe(403);
  });
});

describe('scrubText on AWS credentials', () => {
  it('takes out access key IDs and signatures', () => {
    const key = { provider: 'https://bedrock-runtime.us-east-1.amazonaws.com', config: {}, secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
    const out = scrubText('Credential=AKIAIOSFODNN7EXAMPLE/20250101/us-east-1/bedrock/aws4_request, Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', key);
    expect(out).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(out).not.toContain('0123456789abcdef0123');
  });
});

import { describe, expect, it } from 'vitest';
import { modelNameProblem } from './model-name';

describe('the model-name rule', () => {
  it('accepts the names real providers use', () => {
    for (const m of ['gpt-4o-mini', 'gpt-4.1', 'o3-mini', 'claude-haiku-4-5', 'text-embedding-3-small', 'org/model-x', 'accounts/fz/models/m1',
      'gpt-4o:ft-fuzz:2024', 'meta-llama/Llama-3.1-8B-Instruct+x@v1', 'a'.repeat(200), 'модель-1', 'qwen2.5_72b']) {
      expect(modelNameProblem(m), m).toBeNull();
    }
  });

  it('refuses what is not a model name, naming the rule', () => {
    expect(modelNameProblem(undefined)).toMatch(/required, a string/);
    expect(modelNameProblem(7)).toMatch(/required, a string/);
    expect(modelNameProblem(['gpt-4o'])).toMatch(/required, a string/);
    expect(modelNameProblem('')).toMatch(/1 to 200/);
    expect(modelNameProblem('a'.repeat(201))).toMatch(/1 to 200/);
    for (const m of ['gpt\u0000x', 'gpt\n4o', 'gpt\r\nX-Injected: 1', '\t', 'x\u007f', 'gpt-4o ', '..\\..\\windows', 'gpt-\ud800', '*', 'gpt-4o?x=1', '%2e%2e%2f', '${model}']) {
      expect(modelNameProblem(m), JSON.stringify(m)).toMatch(/only letters, digits/);
    }
    for (const m of ['../../etc/passwd', '..', '.', 'a/../b', 'gpt-4o/../../admin', '/v1/chat/completions', 'org//x', 'org/']) {
      expect(modelNameProblem(m), m).toMatch(/path segment/);
    }
  });
});

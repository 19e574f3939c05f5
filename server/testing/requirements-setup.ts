/**
 * vitest's global setup: the machine is probed once per run for what requirements.ts names, and
 * the answers are handed to every test file (inject('requirements')).
 */
import type { TestProject } from 'vitest/node';
import { probeRequirements } from './requirements';

export default async function setup(project: TestProject): Promise<void> {
  project.provide('requirements', await probeRequirements());
}

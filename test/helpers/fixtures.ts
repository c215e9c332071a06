/** Test helpers: fixture paths and loaders. */
import * as path from 'path';
import { readJsonFile } from '../../src/io/files';
import { parseScenario, type Scenario } from '../../src/model/scenario';

export const ROOT = path.join(__dirname, '..', '..');
export const fixturePath = (name: string): string => path.join(ROOT, 'fixtures', name);

/** The scenario fixtures that have a matching plan in fixtures/plans. */
export const SCENARIO_FIXTURES = [
  'llama3-405b-two-buildings',
  'llama3-8b-one-site',
  'llama3-70b-three-regions',
  'deepseek-v3-moe-two-sites',
] as const;

export const readFixture = (name: string): unknown => readJsonFile(fixturePath(`${name}.json`));
export const loadFixture = (name: string): Scenario => parseScenario(readFixture(name), name);
export const readPlanFixture = (name: string): Record<string, unknown> =>
  readJsonFile(fixturePath(`plans/${name}.plan.json`)) as Record<string, unknown>;

/** A deep copy of a JSON value, to mutate in a test. */
export const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

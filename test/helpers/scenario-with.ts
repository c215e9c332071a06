/** A one-site scenario (fixtures/small/one-site.json) with the given model and training fields. */
import { parseScenario, type Scenario } from '../../src/model/scenario';
import { readFixture } from './fixtures';

type Json = any; // a scenario document being changed

export function scenarioWith(model: Json, training: Json): Scenario {
  const spec = readFixture('small/one-site') as Json;
  spec.model = { name: 'test', ...model };
  spec.training = { ...spec.training, ...training };
  delete spec.search;
  return parseScenario(spec, 'test');
}

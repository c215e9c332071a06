/**
 * The models the editor offers: those of the built-in scenarios, and the Hugging Face configs in
 * fixtures/hf-configs turned into scenario models by the same import as `scaleacross import-model`.
 * Run by scripts/build-explorer.js at build time, so that the page carries the list and not the
 * importer (with its schema library).
 */
import deepseekV3 from '../../fixtures/hf-configs/DeepSeek-V3.json';
import kimiK2 from '../../fixtures/hf-configs/Kimi-K2-Instruct.json';
import llama3_70b from '../../fixtures/hf-configs/Meta-Llama-3-70B.json';
import llama3_8b from '../../fixtures/hf-configs/Meta-Llama-3-8B.json';
import mistral7b from '../../fixtures/hf-configs/Mistral-7B-v0.1.json';
import mixtral from '../../fixtures/hf-configs/Mixtral-8x7B-v0.1.json';
import nemotron from '../../fixtures/hf-configs/Nemotron-4-340B.json';
import qwen2_57b from '../../fixtures/hf-configs/Qwen2-57B-A14B.json';
import qwen2_7b from '../../fixtures/hf-configs/Qwen2-7B.json';
import qwen3_30b from '../../fixtures/hf-configs/Qwen3-30B-A3B.json';
import qwen3_8b from '../../fixtures/hf-configs/Qwen3-8B.json';
import gptOss from '../../fixtures/hf-configs/gpt-oss-120b.json';
import { modelFromHfConfig } from '../../src/model/hf-config';
import { FIXTURES } from './fixtures';

const HF_CONFIGS: Readonly<Record<string, unknown>> = {
  'DeepSeek-V3': deepseekV3, 'Kimi-K2-Instruct': kimiK2, 'Meta-Llama-3-70B': llama3_70b, 'Meta-Llama-3-8B': llama3_8b,
  'Mistral-7B-v0.1': mistral7b, 'Mixtral-8x7B-v0.1': mixtral, 'Nemotron-4-340B': nemotron, 'Qwen2-57B-A14B': qwen2_57b,
  'Qwen2-7B': qwen2_7b, 'Qwen3-30B-A3B': qwen3_30b, 'Qwen3-8B': qwen3_8b, 'gpt-oss-120b': gptOss,
};

/** A model object as the scenario's `model` takes it. */
export type ModelObject = { readonly name: string } & Record<string, unknown>;

export function buildModelCatalog(): ModelObject[] {
  const models = new Map<string, ModelObject>();
  for (const fixture of FIXTURES) {
    const model = (fixture.spec as { model?: ModelObject }).model;
    if (model && typeof model.name === 'string' && !models.has(model.name)) models.set(model.name, model);
  }
  for (const [name, config] of Object.entries(HF_CONFIGS)) {
    if (!models.has(name)) models.set(name, modelFromHfConfig(config, name) as ModelObject);
  }
  return [...models.values()].sort((a, b) => a.name.localeCompare(b.name));
}

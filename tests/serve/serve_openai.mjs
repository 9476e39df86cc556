// The official `openai` npm client against `dream serve`: one non-streaming and one streaming
// chat completion at temperature 0. Prints what it got as JSON lines for test_serve.sh to
// compare with `dream generate --chat`. Usage: node serve_openai.mjs MODULE_DIR BASE_URL USER_TEXT
import { createRequire } from 'node:module';

const [moduleDir, baseURL, userText] = process.argv.slice(2);
const require = createRequire(moduleDir + '/');
const OpenAI = require('openai').default ?? require('openai');

const client = new OpenAI({ baseURL, apiKey: process.env.DREAM_API_KEY || 'unused', maxRetries: 0 });
const messages = [{ role: 'user', content: userText }];

const plain = await client.chat.completions.create({ model: 'tiny-gemma4', messages, temperature: 0, max_tokens: 24 });
console.log(JSON.stringify({
  kind: 'plain',
  content: plain.choices[0].message.content,
  finish: plain.choices[0].finish_reason,
  usage: plain.usage,
}));

const stream = await client.chat.completions.create({
  model: 'tiny-gemma4', messages, temperature: 0, max_tokens: 24, stream: true, stream_options: { include_usage: true },
});
let text = '', chunks = 0, finish = null, usage = null;
for await (const chunk of stream) {
  chunks++;
  if (chunk.usage) usage = chunk.usage;
  const c = chunk.choices[0];
  if (!c) continue;
  if (c.delta?.content) text += c.delta.content;
  if (c.finish_reason) finish = c.finish_reason;
}
console.log(JSON.stringify({ kind: 'stream', content: text, chunks, finish, usage }));

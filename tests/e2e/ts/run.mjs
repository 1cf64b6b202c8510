// One scenario of the TypeScript Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, pinned in package.json) driving
// a CLI, as its users write it: `node run.mjs '{"scenario", "cli", "cwd", "env", "extra"}'`. The CLI is started by
// the SDK through `pathToClaudeCodeExecutable`, so the SDK's bundled Claude Code never runs unless it is named.
// A line "held" on standard input says that the fake model now holds the request the scenario waits on.
// The last line on standard output is the outcome as JSON: the failed checks, each turn's message kinds, the
// results, the CLI's last stderr lines. The fake model's script and the checks on its requests are in
// scenarios.py; tests/e2e/test_agent_sdk_ts.py and bench/sdk_parity_ts.py run both halves.
import { createInterface } from "node:readline";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const config = JSON.parse(process.argv[2]);
const SCHEMA = {
  type: "object",
  properties: { answer: { type: "string" }, score: { type: "integer" } },
  required: ["answer", "score"],
};

class Ctx {
  constructor() {
    this.failed = [];
    this.turns = [];
    this.stderr = [];
    this.data = {}; // what a scenario hands the Python side to check (say, the answers to its control requests)
    this.heldPromise = new Promise((resolve) => {
      const lines = createInterface({ input: process.stdin });
      lines.on("line", (line) => line.trim() === "held" && resolve());
    });
  }
  check(ok, what) {
    if (!ok) this.failed.push(what);
  }
  held() {
    return this.heldPromise;
  }
  // Every message of a query, split into turns at each result; `onResult` decides what comes next.
  async collect(q, onResult = async () => {}) {
    this.turns.push([]);
    for await (const message of q) {
      if (config.debug) process.stderr.write(`message: ${JSON.stringify(message).slice(0, 300)}\n`);
      this.turns.at(-1).push(message);
      if (message.type === "result") {
        await onResult(message, this.turns.length);
        this.turns.push([]);
      }
    }
    if (this.turns.at(-1).length === 0) this.turns.pop();
    return this.turns.flat();
  }
}

// Streamed input: user messages sent one at a time, while the query runs.
function inbox() {
  const items = [];
  let wake = null;
  let done = false;
  const iterable = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (items.length) {
          yield items.shift();
        } else if (done) {
          return;
        } else {
          await new Promise((resolve) => (wake = resolve));
        }
      }
    },
  };
  const poke = () => wake && (wake(), (wake = null));
  return {
    iterable,
    send(text, uuid) {
      items.push({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "",
                   ...(uuid ? { uuid } : {}) });
      poke();
    },
    close() {
      done = true;
      poke();
    },
  };
}

const results = (messages) => messages.filter((m) => m.type === "result");
const resultOf = (messages) => results(messages).at(-1) ?? {};
const initOf = (messages) => messages.find((m) => m.type === "system" && m.subtype === "init") ?? {};

// Several prompts in one session: each sent when the previous turn's result came.
async function conversation(ctx, options, prompts, before = async () => {}) {
  const box = inbox();
  const q = query({ prompt: box.iterable, options });
  await before(q);
  box.send(prompts[0]);
  const got = await ctx.collect(q, async (_result, n) => (n < prompts.length ? box.send(prompts[n]) : box.close()));
  return { q, got };
}

const scenarios = {
  async plain(options, ctx) {
    const got = await ctx.collect(query({ prompt: "PLAIN-1 say hello", options }));
    ctx.check(got[0]?.type === "system" && got[0].subtype === "init", "init comes first");
    ctx.check(resultOf(got).result === "Hello from the fake model.", "result is the answer");
    ctx.check(resultOf(got).subtype === "success" && resultOf(got).num_turns === 1, "success in one turn");
  },

  async system_prompt(options, ctx) {
    const got = await ctx.collect(query({ prompt: "SYS-1 who are you?", options: { ...options, systemPrompt: "CUSTOM-ROLE You are the test role." } }));
    ctx.check(resultOf(got).result === "The custom role is in place.", "the model saw the custom role");
  },

  async append_system_prompt(options, ctx) {
    const systemPrompt = { type: "preset", preset: "claude_code", append: "APPENDED-NOTE Sign every answer as Tester." };
    const got = await ctx.collect(query({ prompt: "APPEND-1 who are you?", options: { ...options, systemPrompt } }));
    ctx.check(resultOf(got).result === "The appended note is in place.", "the model saw the appended text");
  },

  async multiturn(options, ctx) {
    const { got } = await conversation(ctx, options, ["MT-1 turn one", "MT-2 turn two", "MT-3 turn three"]);
    const rs = results(got);
    ctx.check(JSON.stringify(rs.map((r) => r.result)) === JSON.stringify(["Answer 1.", "Answer 2.", "Answer 3."]), "three answers");
    ctx.check(rs.every((r) => r.num_turns === 1), "num_turns is per turn");
    ctx.check(new Set(rs.map((r) => r.session_id)).size === 1, "one session id");
  },

  async permissions(options, ctx) {
    const asked = [];
    const canUseTool = async (name, input) => {
      asked.push(name);
      return name === "Write"
        ? { behavior: "allow", updatedInput: { ...input, content: "from the callback\n" } }
        : { behavior: "deny", message: "not on my watch" };
    };
    const got = await ctx.collect(query({ prompt: "PERM-1 write a file, then run a command", options: { ...options, canUseTool } }));
    const result = resultOf(got);
    ctx.check(JSON.stringify(asked) === '["Write","Bash"]', `asked Write then Bash (asked ${asked})`);
    let written = "";
    try {
      written = readFileSync(join(config.cwd, "a.txt"), "utf8");
    } catch {}
    ctx.check(written === "from the callback\n", "updatedInput was written");
    ctx.check(result.subtype === "success" && result.result === "Done.", "the turn went on after the deny");
    ctx.check((result.permission_denials ?? []).map((d) => d.tool_use_id).join() === "toolu_bash", "one denial listed");
  },

  async interrupt(options, ctx) {
    const box = inbox();
    const q = query({ prompt: box.iterable, options });
    box.send("INT-1 a slow question");
    ctx.held().then(() => q.interrupt());
    const got = await ctx.collect(q, async (_r, n) => (n === 1 ? box.send("INT-2 after the interrupt") : box.close()));
    const [first, second] = results(got);
    ctx.check(first?.is_error && first.subtype === "error_during_execution", "the interrupted turn is an error result");
    ctx.check(second?.subtype === "success" && second.result === "Back again.", "the next turn answers");
  },

  async accept_edits(options, ctx) {
    const { got } = await conversation(ctx, options, ["EDIT-1 change the notes"], (q) => q.setPermissionMode("acceptEdits"));
    ctx.check(initOf(got).permissionMode === "acceptEdits", "init says acceptEdits");
    ctx.check(readFileSync(join(config.cwd, "notes.txt"), "utf8") === "edited line\n", "the edit ran without asking");
    ctx.check(resultOf(got).result === "Edited.", "result is the answer");
  },

  async hook_deny(options, ctx) {
    const seen = [];
    const guard = async (input) => {
      seen.push(input);
      return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Blocked by the program" } };
    };
    const hooks = { PreToolUse: [{ matcher: "Bash", hooks: [guard] }] };
    const got = await ctx.collect(query({ prompt: "HOOK-1 touch a file", options: { ...options, hooks } }));
    ctx.check(seen.map((d) => `${d.tool_name}/${d.tool_use_id}`).join() === "Bash/toolu_hooked", "the hook saw the Bash call");
    let blocked = true;
    try {
      readFileSync(join(config.cwd, "hooked.txt"));
      blocked = false;
    } catch {}
    ctx.check(blocked, "the blocked command did not run");
    ctx.check(resultOf(got).result === "Blocked, then.", "the model read the hook's reason");
  },

  async sdk_mcp(options, ctx) {
    const calls = [];
    const add = tool("add", "Add two integers", { a: z.number().int(), b: z.number().int() }, async (args) => {
      calls.push(args);
      return { content: [{ type: "text", text: `sum=${args.a + args.b}` }] };
    });
    const calc = createSdkMcpServer({ name: "calc", version: "1.2.3", tools: [add] });
    let status = null;
    const box = inbox();
    const q = query({ prompt: box.iterable, options: { ...options, mcpServers: { calc }, allowedTools: ["mcp__calc__add"] } });
    box.send("MCP-1 add 2 and 3");
    const got = await ctx.collect(q, async () => {
      status = await q.mcpServerStatus();
      box.close();
    });
    ctx.check(JSON.stringify(calls) === '[{"a":2,"b":3}]', "the program's tool ran once");
    ctx.check((initOf(got).tools ?? []).includes("mcp__calc__add"), "init lists mcp__calc__add");
    ctx.check(resultOf(got).result === "2 + 3 = 5.", "the tool's answer reached the model");
    const calcStatus = (status ?? []).find((s) => s.name === "calc") ?? {};
    ctx.check(calcStatus.status === "connected", "mcpServerStatus: calc connected");
  },

  async stdio_mcp(options, ctx) {
    const time = { command: config.extra.python, args: ["-m", "mcp_server_time", "--local-timezone", "UTC"] };
    const got = await ctx.collect(query({ prompt: "TIME-1 what time is it in UTC?", options: { ...options, mcpServers: { time }, allowedTools: ["mcp__time__get_current_time"] } }));
    ctx.check((initOf(got).tools ?? []).includes("mcp__time__get_current_time"), "init lists the server's tool");
    ctx.check(resultOf(got).result === "It is now in UTC.", "the server's answer reached the model");
  },

  async plugins_initialize(options, ctx) {
    const plugins = [{ type: "local", path: config.extra.plugin }];
    const q = query({ prompt: "PLUG-1 map the parser", options: { ...options, plugins, pluginDelivery: "initialize" } });
    let applied;
    const got = await ctx.collect(q, async () => { applied = (await q.initializationResult()).plugins_applied; });
    ctx.check(applied === true, `initializationResult().plugins_applied (got ${applied})`);
    const init = initOf(got);
    ctx.check((init.plugins ?? []).map((p) => p.name).join() === "feature-dev", "init lists the plugin");
    ctx.check((init.agents ?? []).includes("feature-dev:code-explorer"), "init lists the plugin's agent");
    ctx.check(resultOf(got).result === "The explorer mapped it.", "the plugin's agent ran");
  },

  async sdk_agent(options, ctx) {
    const reviewer = { description: "Reviews notes", prompt: "REVIEWER-SYS You review.", tools: ["Read"], model: "inherit" };
    const got = await ctx.collect(query({ prompt: "AGENT-1 have the reviewer look at the notes", options: { ...options, agents: { reviewer } } }));
    ctx.check((initOf(got).agents ?? []).includes("reviewer"), "init lists the reviewer");
    const started = got.filter((m) => m.type === "system" && m.subtype === "task_started");
    ctx.check(started.map((m) => m.tool_use_id).join() === "toolu_task", "task_started names the call");
    const done = got.filter((m) => m.type === "system" && m.subtype === "task_notification").map((m) => m.status);
    ctx.check(done.join() === "completed", `task_notification completed (got ${done})`);
    ctx.check(got.some((m) => m.parent_tool_use_id === "toolu_task"), "the subagent's messages streamed");
    ctx.check(resultOf(got).result === "Reviewed: fine.", "result is the answer");
  },

  async json_schema(options, ctx) {
    const got = await ctx.collect(query({ prompt: "JSON-1 what is the answer?", options: { ...options, outputFormat: { type: "json_schema", schema: SCHEMA } } }));
    const result = resultOf(got);
    ctx.check(result.subtype === "success" && !result.is_error, "success");
    ctx.check(JSON.stringify(result.structured_output) === '{"answer":"forty-two","score":42}', "structured_output");
  },

  async deny_interrupt(options, ctx) {
    const canUseTool = async () => ({ behavior: "deny", message: "stop everything", interrupt: true });
    const { got } = await conversation(ctx, { ...options, canUseTool }, ["STOP-1 touch a file", "STOP-2 next question"]);
    const [stopped, again] = results(got);
    ctx.check(stopped?.is_error && stopped.subtype === "error_during_execution", "the deny ended the turn");
    let untouched = true;
    try {
      readFileSync(join(config.cwd, "stopped.txt"));
      untouched = false;
    } catch {}
    ctx.check(untouched, "the denied command did not run");
    ctx.check(again?.result === "Here again.", "the next message is answered");
  },

  async rewind_files(options, ctx) {
    // The workspace has notes.txt; the model's turn edits it, writes sub/dir/new.txt, and runs a command that
    // makes made.txt and removes data.bin; then the person changes keep.txt, and the files are rewound.
    const ws = (name) => join(config.cwd, name);
    const data = Buffer.from([0, 1, 254, 255, 10]);
    writeFileSync(ws("data.bin"), data);
    writeFileSync(ws("keep.txt"), "mine\n");
    const chosen = "7d3c1f52-9a4e-4b1c-8f2d-3e5a6b7c8d90";
    const allow = async (_name, input) => ({ behavior: "allow", updatedInput: input });
    const box = inbox();
    const q = query({ prompt: box.iterable, options: { ...options, enableFileCheckpointing: true, canUseTool: allow,
                                                        extraArgs: { "replay-user-messages": null } } });
    box.send("REW-1 change the files", chosen);
    const got = await ctx.collect(q, async () => {
      const replayed = ctx.turns.at(-1).find((m) => m.type === "user" && m.message?.content === "REW-1 change the files");
      ctx.check(replayed?.uuid === chosen, `the replayed message keeps the program's uuid (got ${replayed?.uuid})`);
      writeFileSync(ws("keep.txt"), "changed by the person\n");
      ctx.data.unknown = await q.rewindFiles("00000000-0000-4000-8000-000000000000", { dryRun: true });
      ctx.data.dry = await q.rewindFiles(chosen, { dryRun: true });
      ctx.check(existsSync(ws("made.txt")) && !existsSync(ws("data.bin")), "the dry run changed nothing");
      ctx.data.rewound = await q.rewindFiles(chosen);
      box.close();
    });
    ctx.check(resultOf(got).result === "Changed.", "the turn answered");
    ctx.check(readFileSync(ws("notes.txt"), "utf8") === "first line\n", "notes.txt is back");
    ctx.check(existsSync(ws("data.bin")) && readFileSync(ws("data.bin")).equals(data), "data.bin is back, byte for byte");
    ctx.check(!existsSync(ws("made.txt")) && !existsSync(ws("sub")), "the new files and folders are gone");
    ctx.check(readFileSync(ws("keep.txt"), "utf8") === "changed by the person\n", "the person's change is kept");
  },

  async resume_fork(options, ctx) {
    const chosen = "0b6f7f0e-2d0c-4c8e-9a59-5f3f1f0d8a11";
    const first = await ctx.collect(query({ prompt: "RES-1 remember the word teal", options: { ...options, sessionId: chosen } }));
    const original = resultOf(first).session_id;
    ctx.check(original === chosen, "sessionId names the session");
    const forked = await ctx.collect(query({ prompt: "RES-2 which word was it?", options: { ...options, resume: original, forkSession: true } }));
    ctx.check(resultOf(forked).result === "It was teal.", "the fork remembers");
    ctx.check(resultOf(forked).session_id !== original, "the fork is a new session");
  },
};

async function main() {
  const ctx = new Ctx();
  const options = {
    pathToClaudeCodeExecutable: config.cli,
    cwd: config.cwd,
    env: { ...process.env, ...config.env },
    stderr: (data) => ctx.stderr.push(...String(data).split("\n").filter((l) => l.trim())),
  };
  const scenario = scenarios[config.scenario];
  if (!scenario) {
    ctx.failed.push(`no scenario ${config.scenario}; known: ${Object.keys(scenarios).join(", ")}`);
  } else {
    try {
      await scenario(options, ctx);
    } catch (error) {
      ctx.failed.push(`${error?.name ?? "Error"}: ${String(error?.message ?? error).split("\n")[0].slice(0, 300)}`);
    }
  }
  const kind = (m) => (m.type === "system" ? `system:${m.subtype}` : m.type) + (m.parent_tool_use_id ? "(sub)" : "");
  const outcome = {
    failed: ctx.failed,
    turns: ctx.turns.map((turn) => turn.map(kind)),
    results: ctx.turns.flat().filter((m) => m.type === "result").map((r) => ({
      subtype: r.subtype, is_error: r.is_error, num_turns: r.num_turns, result: r.result ?? null,
      terminal_reason: r.terminal_reason ?? null, denials: (r.permission_denials ?? []).length,
      structured_output: r.structured_output ?? null, session_id: r.session_id,
    })),
    stderr: ctx.stderr.slice(-8),
    data: ctx.data,
  };
  process.stdout.write(JSON.stringify(outcome) + "\n");
  process.exit(0);
}

main();

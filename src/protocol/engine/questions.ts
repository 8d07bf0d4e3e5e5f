import { McpError } from '../../errors.js';

/** A peer's request being answered, about requests of ours: how many of them are not over yet. */
interface Question {
  readonly controller: AbortController;
  readonly ids: readonly number[];
  left: number;
}

/** The question of an incoming request's controller, if it is about requests of ours. */
const questionOf = new WeakMap<AbortController, Question>();

/**
 * The peer's requests still being answered that are about requests of ours (a question on
 * a tool call), by our request's id: each one's handler signal aborts once every request
 * it is about is over. Made by the engine at the first such request: most sessions never have one.
 */
export class Questions {
  private readonly byRequest = new Map<number, Set<Question>>();

  /** The handler of `controller` answers a question about our requests `live` (all still pending). */
  add(controller: AbortController, live: readonly number[]): void {
    const question: Question = { controller, ids: live, left: live.length };
    for (const id of live) {
      let set = this.byRequest.get(id);
      if (!set) this.byRequest.set(id, (set = new Set()));
      set.add(question);
    }
    questionOf.set(controller, question);
  }

  /** Our request `id` is over: a question about it (and about nothing else still running) is stopped. */
  over(id: number, why: McpError | undefined): void {
    const questions = this.byRequest.get(id);
    if (!questions) return;
    this.byRequest.delete(id);
    for (const question of questions) {
      if (--question.left > 0) continue;
      questionOf.delete(question.controller);
      question.controller.abort(why ?? new McpError('cancelled', 'the request this one is about was answered'));
    }
  }

  /** The peer's request was answered: it is no longer tied to ours. */
  answered(controller: AbortController): void {
    const question = questionOf.get(controller);
    if (!question) return;
    questionOf.delete(controller);
    for (const id of question.ids) {
      const set = this.byRequest.get(id);
      if (set?.delete(question) && set.size === 0) this.byRequest.delete(id);
    }
  }
}

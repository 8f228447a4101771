import { describe, expect, it } from "vitest";
import { createBodyBudget } from "./body-budget.ts";

describe("the request body budget", () => {
  it("holds bodies past the budget in line until bytes are released, in arrival order", async () => {
    const budget = createBodyBudget(10);
    const first = await budget.reserve(6);
    const granted: string[] = [];
    const second = budget.reserve(6).then((reservation) => {
      granted.push("second");
      return reservation;
    });
    const third = budget.reserve(1).then((reservation) => {
      granted.push("third");
      return reservation;
    });
    await Promise.resolve();
    // The third would fit, but waits behind the second: no body is starved by smaller ones.
    expect(granted).toEqual([]);
    expect(budget.status()).toEqual({ held: 6, waiting: 2 });
    first.release();
    first.release();
    (await second).release();
    (await third).release();
    expect(granted).toEqual(["second", "third"]);
    expect(budget.status()).toEqual({ held: 0, waiting: 0 });
  });

  it("gives a body larger than the budget the whole budget, once nothing else is held", async () => {
    const budget = createBodyBudget(10);
    const small = await budget.reserve(2);
    let large = false;
    const waiting = budget.reserve(50).then((reservation) => {
      large = true;
      return reservation;
    });
    await Promise.resolve();
    expect(large).toBe(false);
    small.release();
    const reservation = await waiting;
    expect(budget.status()).toEqual({ held: 10, waiting: 0 });
    reservation.release();
    expect(budget.status()).toEqual({ held: 0, waiting: 0 });
  });
});

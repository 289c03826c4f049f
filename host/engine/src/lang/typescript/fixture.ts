import { readFile as rf, Stats } from "fs";
import * as path from "node:path";
import Default from "./default";

/** The shape of things. */
export interface Shape<T> {
  area(): number;
  owner: T;
}

export type Id = string | Shape<number>;

export enum Color {
  Red,
  Green = 2,
}

export const LIMIT = 10;

export class Square extends Base implements Shape<Id> {
  size: number = LIMIT;

  constructor(size: number) {
    super();
    this.size = size;
  }

  area(): number {
    const s = this.size;
    return this.scale(s) * Color.Red;
  }
}

export function make(n: number): Square {
  const sq = new Square(n);
  sq.area();
  return helper(sq, path.join("a", "b"));
}

const double = (x: number) => x * 2;

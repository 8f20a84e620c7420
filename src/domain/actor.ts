/** Who is asking, when authentication is on. With auth off there is no actor and no ownership rule. */
export interface Actor {
  /** The token's subject: the author of what this actor creates. */
  readonly subject: string;
  /** May edit and delete anybody's messages. */
  readonly admin: boolean;
}

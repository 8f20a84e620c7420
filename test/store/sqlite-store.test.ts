import { sqliteEngine } from '../support/engines.ts';
import { messageStoreContract } from './message-store.contract.ts';
import { roomStoreContract } from './room-store.contract.ts';
import { searchContract } from './search.contract.ts';

messageStoreContract(sqliteEngine);
// The same promises with every per-turn scheduler off (BATCHING=off, docs/schedulers.md).
messageStoreContract(sqliteEngine, { batching: false });
roomStoreContract(sqliteEngine);
searchContract(sqliteEngine);

import { sqliteEngine } from '../support/engines.ts';
import { messageStoreContract } from './message-store.contract.ts';

messageStoreContract(sqliteEngine);

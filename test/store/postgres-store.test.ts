import { postgresEngine } from '../support/engines.ts';
import { messageStoreContract } from './message-store.contract.ts';

messageStoreContract(postgresEngine);

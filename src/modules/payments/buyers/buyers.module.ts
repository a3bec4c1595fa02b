import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Buyer } from './buyer.entity';
import { BuyersController } from './buyers.controller';
import { BuyersRepository } from './buyers.repository';
import { BuyersService } from './buyers.service';
import { VaultCoreModule } from '../../vault/vault.module';

/** The buyers table without routes: the payment methods look their buyers up through it. */
@Module({
  imports: [TypeOrmModule.forFeature([Buyer])],
  providers: [BuyersRepository],
  exports: [BuyersRepository],
})
export class BuyersCoreModule {}

@Module({
  imports: [BuyersCoreModule, VaultCoreModule],
  controllers: [BuyersController],
  providers: [BuyersService],
  exports: [BuyersService],
})
export class BuyersModule {}

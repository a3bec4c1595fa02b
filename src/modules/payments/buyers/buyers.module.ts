import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Buyer } from './buyer.entity';
import { BuyersController } from './buyers.controller';
import { BuyersRepository } from './buyers.repository';
import { BuyersService } from './buyers.service';
import { VaultModule } from '../../vault/vault.module';

@Module({
  imports: [TypeOrmModule.forFeature([Buyer]), VaultModule],
  controllers: [BuyersController],
  providers: [BuyersService, BuyersRepository],
  exports: [BuyersService],
})
export class BuyersModule {}
